// The text spelling of a cutune.v1 enum value, shared by the CLI and the client library: its
// proto name without the prefix its type's values share, in lower case ("OUTCOME_WRONG_ANSWER"
// -> "wrong_answer", "RUNG_EXACT" -> "exact"). Machine output keeps the proto name.
#pragma once

#include <string>

#include "google/protobuf/generated_enum_reflection.h"

namespace cutune::client {

std::string EnumLabel(const google::protobuf::EnumDescriptor* type, int value);

template <typename E>
std::string EnumLabel(E value) {
  return EnumLabel(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}

}  // namespace cutune::client
