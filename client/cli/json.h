// --json output: cutune.v1 messages as JSON objects with the proto's field names. Unlike the
// proto3 JSON mapping, 64-bit integers stay numbers (shapes and byte counts read naturally in
// jq) and every field is present, zero or not; bytes are base64.
#pragma once

#include <string>

#include "google/protobuf/generated_enum_reflection.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace cutune::cli {

nlohmann::ordered_json ToJson(const google::protobuf::Message& message);

// The text spelling of a cutune.v1 enum value: its proto name without the prefix its type's
// values share, in lower case ("OUTCOME_WRONG_ANSWER" -> "wrong_answer", "STATE_RUNNING" ->
// "running"). Machine output keeps the proto name.
std::string EnumLabel(const google::protobuf::EnumDescriptor* type, int value);
template <typename E>
std::string EnumLabel(E value) {
  return EnumLabel(google::protobuf::GetEnumDescriptor<E>(), static_cast<int>(value));
}

}  // namespace cutune::cli
