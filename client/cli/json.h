// --json output: cutune.v1 messages as JSON objects with the proto's field names. Unlike the
// proto3 JSON mapping, 64-bit integers stay numbers (shapes and byte counts read naturally in
// jq) and every field is present, zero or not; bytes are base64.
#pragma once

#include "client/lib/enum_label.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"

namespace cutune::cli {

nlohmann::ordered_json ToJson(const google::protobuf::Message& message);

using client::EnumLabel;  // the text spelling of enum values

}  // namespace cutune::cli
