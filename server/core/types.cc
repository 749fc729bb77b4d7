#include "server/core/types.h"

#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/core/strings.h"

namespace cutune {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
  }
  return "?";
}

absl::StatusOr<DType> ParseDType(std::string_view text) {
  if (text == "f32" || text == "float32" || text == "float") return DType::kF32;
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported dtype ", Quoted(text), " (supported: f32)"));
}

int DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
  }
  return 0;
}

std::string FormatShape(const Shape& shape) { return absl::StrJoin(shape, "x"); }

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  Shape shape;
  if (text.empty()) return absl::InvalidArgumentError("empty shape");
  for (absl::string_view part : absl::StrSplit(ToAbsl(text), 'x')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad shape '", std::string(text), "': expected positive integers separated by 'x', e.g. 4096x4096"));
    }
    shape.push_back(value);
  }
  return shape;
}

std::string FormatParams(const Params& params) {
  return absl::StrJoin(params, ",", absl::PairFormatter("="));
}

absl::StatusOr<Params> ParseParams(std::string_view text) {
  Params params;
  if (absl::StripAsciiWhitespace(ToAbsl(text)).empty()) return params;
  for (absl::string_view item : absl::StrSplit(ToAbsl(text), ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    if (key.empty() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(kv.second), &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad parameter '", std::string(item), "': expected name=integer"));
    }
    if (!params.emplace(std::string(key), value).second) {
      return absl::InvalidArgumentError(absl::StrCat("parameter '", std::string(key), "' given twice"));
    }
  }
  return params;
}

std::string_view OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kPruned:
      return "pruned";
    case Outcome::kCompileFailed:
      return "compile_failed";
    case Outcome::kOutOfResources:
      return "out_of_resources";
    case Outcome::kFault:
      return "fault";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kWrongAnswer:
      return "wrong_answer";
  }
  return "?";
}

absl::StatusOr<Outcome> ParseOutcome(std::string_view name) {
  for (Outcome outcome : kAllOutcomes) {
    if (OutcomeName(outcome) == name) return outcome;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown outcome '", std::string(name), "'"));
}

}  // namespace cutune
