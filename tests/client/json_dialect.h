// Checks that a --json output is in the CLI's one dialect (client/cli/json.h) for the message
// type it claims to be: every key a field's proto (snake_case) name, every scalar, repeated and
// map field present, 64-bit integers as strings of digits, enums as names of their type's values,
// map keys in sorted order; and that protobuf parses it back into that type (unknown fields
// refused) and prints the very same bytes again.
#pragma once

#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace cutune::testing {

::testing::AssertionResult InJsonDialect(const std::string& text,
                                         const google::protobuf::Descriptor* type);
template <typename M>
::testing::AssertionResult InJsonDialect(const std::string& text) {
  return InJsonDialect(text, M::descriptor());
}

// `text` parsed into M; a failure of the test when it does not parse.
template <typename M>
M ParseJsonAs(const std::string& text) {
  M message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(text, &message, options);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << text;
  return message;
}

}  // namespace cutune::testing
