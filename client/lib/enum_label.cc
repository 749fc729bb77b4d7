#include "client/lib/enum_label.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace cutune::client {

std::string EnumLabel(const google::protobuf::EnumDescriptor* type, int value) {
  const auto* v = type->FindValueByNumber(value);
  if (v == nullptr) return absl::StrCat("unknown(", value, ")");
  // Every cutune.v1 enum starts with TYPE_UNSPECIFIED = 0: TYPE_ is the shared prefix.
  std::string prefix = type->value(0)->name();
  constexpr absl::string_view kUnspecified = "UNSPECIFIED";
  if (absl::EndsWith(prefix, kUnspecified)) prefix.resize(prefix.size() - kUnspecified.size());
  std::string name = v->name();
  if (absl::StartsWith(name, prefix)) name = name.substr(prefix.size());
  return absl::AsciiStrToLower(name);
}

}  // namespace cutune::client
