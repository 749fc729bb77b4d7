#include "client/cli/json.h"

#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/cli/exit_codes.h"
#include "client/cli/render.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace cutune::cli {

namespace protobuf = ::google::protobuf;

absl::StatusOr<std::string> ToJson(const protobuf::Message& message) {
  // protobuf 3.21's MessageToJsonString prints map entries in hash order, which differs between
  // equal messages (and CI diffs these outputs). It is BinaryToJsonString over the message's
  // wire form, and that printer keeps the wire order: serialized deterministically, map entries
  // are in key order.
  std::string binary;
  {
    protobuf::io::StringOutputStream stream(&binary);
    protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&coded)) {
      return absl::InternalError(
          absl::StrCat("cannot serialize ", message.GetDescriptor()->full_name()));
    }
  }
  constexpr char kUrlPrefix[] = "type.googleapis.com";
  const protobuf::Descriptor* descriptor = message.GetDescriptor();
  std::unique_ptr<protobuf::util::TypeResolver> resolver(
      protobuf::util::NewTypeResolverForDescriptorPool(kUrlPrefix, descriptor->file()->pool()));
  protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = protobuf::util::BinaryToJsonString(
      resolver.get(), absl::StrCat(kUrlPrefix, "/", descriptor->full_name()), binary, &json,
      options);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot print ", descriptor->full_name(), " as JSON: ", status.ToString()));
  }
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

int PrintJson(const protobuf::Message& message) {
  absl::StatusOr<std::string> json = ToJson(message);
  if (!json.ok()) return ReportError(json.status(), kExitFailure);
  std::cout << *json;
  return kExitOk;
}

}  // namespace cutune::cli
