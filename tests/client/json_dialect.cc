#include "tests/client/json_dialect.h"

#include <memory>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "client/cli/json.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace cutune::testing {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::ordered_json;  // keeps the printed key order

std::string CheckMessage(const Json& j, const Descriptor* type, const std::string& path);

// One value of `field` (an element, for a repeated field); "" when it is in the dialect.
std::string CheckValue(const Json& v, const FieldDescriptor* field, const std::string& path) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
      return v.is_number_integer() ? "" : path + ": a 32-bit integer is not a JSON integer";
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64: {
      int64_t i = 0;
      uint64_t u = 0;
      if (!v.is_string()) return path + ": a 64-bit integer is not a string";
      const std::string& s = v.get_ref<const std::string&>();
      return absl::SimpleAtoi(s, &i) || absl::SimpleAtoi(s, &u)
                 ? ""
                 : path + ": '" + s + "' is not an integer";
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return v.is_number() || v == "NaN" || v == "Infinity" || v == "-Infinity"
                 ? ""
                 : path + ": not a number";
    case FieldDescriptor::CPPTYPE_BOOL:
      return v.is_boolean() ? "" : path + ": not a boolean";
    case FieldDescriptor::CPPTYPE_ENUM:
      if (!v.is_string()) return path + ": an enum is not a string";
      return field->enum_type()->FindValueByName(v.get<std::string>()) != nullptr
                 ? ""
                 : path + ": '" + v.get<std::string>() + "' is not a value of " +
                       field->enum_type()->full_name();
    case FieldDescriptor::CPPTYPE_STRING:
      return v.is_string() ? "" : path + ": not a string";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return CheckMessage(v, field->message_type(), path);
  }
  return path + ": unknown field type";
}

// Map keys are strings in JSON; integer keys sort by value.
bool KeyLess(const std::string& a, const std::string& b, const FieldDescriptor* key) {
  if (key->cpp_type() == FieldDescriptor::CPPTYPE_STRING) return a < b;
  int64_t x = 0, y = 0;
  if (absl::SimpleAtoi(a, &x) && absl::SimpleAtoi(b, &y)) return x < y;
  return a < b;
}

std::string CheckField(const Json& v, const FieldDescriptor* field, const std::string& path) {
  if (field->is_map()) {
    if (!v.is_object()) return path + ": a map is not an object";
    const FieldDescriptor* key = field->message_type()->map_key();
    const FieldDescriptor* value = field->message_type()->map_value();
    std::optional<std::string> previous;
    for (const auto& [k, element] : v.items()) {
      if (previous && !KeyLess(*previous, k, key)) {
        return absl::StrCat(path, ": map keys out of order ('", *previous, "' before '", k, "')");
      }
      previous = k;
      if (std::string e = CheckValue(element, value, path + "/" + k); !e.empty()) return e;
    }
    return "";
  }
  if (field->is_repeated()) {
    if (!v.is_array()) return path + ": a repeated field is not an array";
    for (size_t i = 0; i < v.size(); ++i) {
      if (std::string e = CheckValue(v[i], field, absl::StrCat(path, "/", i)); !e.empty()) {
        return e;
      }
    }
    return "";
  }
  return CheckValue(v, field, path);
}

std::string CheckMessage(const Json& j, const Descriptor* type, const std::string& path) {
  if (!j.is_object()) return path + ": a message is not an object";
  for (const auto& [key, value] : j.items()) {
    const FieldDescriptor* field = type->FindFieldByName(key);
    if (field == nullptr) {
      return absl::StrCat(path, "/", key, ": not a field name of ", type->full_name());
    }
    if (std::string e = CheckField(value, field, path + "/" + key); !e.empty()) return e;
  }
  for (int i = 0; i < type->field_count(); ++i) {
    const FieldDescriptor* field = type->field(i);
    // A message field says "unset" by its absence, and so does a oneof member.
    const bool may_be_absent =
        field->containing_oneof() != nullptr ||
        (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated());
    if (!may_be_absent && !j.contains(field->name())) {
      return absl::StrCat(path, ": ", type->full_name(), " field '", field->name(), "' missing");
    }
  }
  return "";
}

}  // namespace

::testing::AssertionResult InJsonDialect(const std::string& text, const Descriptor* type) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return ::testing::AssertionFailure() << "not JSON:\n" << text;
  if (std::string e = CheckMessage(j, type, ""); !e.empty()) {
    return ::testing::AssertionFailure() << type->full_name() << e;
  }
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
  if (prototype == nullptr) return ::testing::AssertionFailure() << "no " << type->full_name();
  std::unique_ptr<google::protobuf::Message> message(prototype->New());
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  if (auto s = google::protobuf::util::JsonStringToMessage(text, message.get(), options); !s.ok()) {
    return ::testing::AssertionFailure()
           << "does not parse as " << type->full_name() << ": " << s.ToString();
  }
  absl::StatusOr<std::string> again = cli::ToJson(*message);
  if (!again.ok()) return ::testing::AssertionFailure() << again.status();
  if (*again != text) {
    return ::testing::AssertionFailure() << "printed again, " << type->full_name() << " differs:\n"
                                         << *again << "\nwas\n"
                                         << text;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace cutune::testing
