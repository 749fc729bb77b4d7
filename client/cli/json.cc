#include "client/cli/json.h"

#include <algorithm>
#include <vector>

#include "absl/strings/escaping.h"
#include "google/protobuf/descriptor.h"

namespace cutune::cli {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using nlohmann::ordered_json;

// One value of `field` (element `index` when repeated, -1 otherwise).
ordered_json Value(const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  const bool rep = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(message, field, index) : r->GetUInt32(message, field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r->GetRepeatedUInt64(message, field, index) : r->GetUInt64(message, field);
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(message, field, index) : r->GetDouble(message, field);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(message, field, index) : r->GetFloat(message, field);
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field);
    case FieldDescriptor::CPPTYPE_ENUM:
      return (rep ? r->GetRepeatedEnum(message, field, index) : r->GetEnum(message, field))->name();
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string text =
          rep ? r->GetRepeatedString(message, field, index) : r->GetString(message, field);
      if (field->type() == FieldDescriptor::TYPE_BYTES) return absl::Base64Escape(text);
      return text;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return ToJson(rep ? r->GetRepeatedMessage(message, field, index)
                        : r->GetMessage(message, field));
  }
  return nullptr;
}

}  // namespace

ordered_json ToJson(const Message& message) {
  ordered_json out = ordered_json::object();
  const auto* descriptor = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    // Of a oneof only the member that is set says anything.
    if (field->containing_oneof() != nullptr && !r->HasField(message, field)) continue;
    if (field->is_map()) {
      // Map entries come in hash order; sort by key so the output is stable.
      const FieldDescriptor* key = field->message_type()->map_key();
      const FieldDescriptor* value = field->message_type()->map_value();
      std::vector<std::pair<std::string, ordered_json>> entries;
      for (int j = 0; j < r->FieldSize(message, field); ++j) {
        const Message& entry = r->GetRepeatedMessage(message, field, j);
        ordered_json k = Value(entry, key, -1);
        entries.emplace_back(k.is_string() ? k.get<std::string>() : k.dump(),
                             Value(entry, value, -1));
      }
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      ordered_json map = ordered_json::object();
      for (auto& [k, v] : entries) map[k] = std::move(v);
      out[field->name()] = std::move(map);
    } else if (field->is_repeated()) {
      ordered_json list = ordered_json::array();
      for (int j = 0; j < r->FieldSize(message, field); ++j)
        list.push_back(Value(message, field, j));
      out[field->name()] = std::move(list);
    } else {
      out[field->name()] = Value(message, field, -1);
    }
  }
  return out;
}

}  // namespace cutune::cli
