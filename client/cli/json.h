// --json output: every `--json` of the CLI prints one cutune.v1 message (an RPC's response, or a
// report of proto/cutune/v1/cli.proto) through ToJson, in one dialect (docs/cli.md,
// "Machine-readable output"): protobuf's JSON mapping with the proto's snake_case field names,
// every scalar, repeated and map field present (zero or not; a message field only when set),
// enums by their proto names ("OUTCOME_OK", "STATE_RUNNING"), 64-bit integers as strings, bytes
// as base64, and map entries sorted by key. Any protobuf library parses it back into the message
// (JsonStringToMessage, Python's json_format.Parse).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/lib/enum_label.h"
#include "google/protobuf/message.h"

namespace cutune::cli {

// `message` as indented JSON, ending in a newline. The same message gives the same bytes,
// however its maps were filled.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);
// Writes ToJson(message) on stdout and returns kExitOk, or reports why it could not (exit 1).
int PrintJson(const google::protobuf::Message& message);

using client::EnumLabel;  // the text spelling of enum values

}  // namespace cutune::cli
