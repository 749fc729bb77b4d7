// Space: size without expansion, mixed-radix decoding, checks, narrowing, constraint text.
#include "kernels/space.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cutune::kernels {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

Space SmallSpace() {
  return Space({{"a", {1, 2, 3}, ""}, {"b", {10, 20}, ""}, {"c", {5, 6, 7, 8}, ""}},
               {{"a + c is even",
                 {"a", "c"},
                 [](const Params& p) { return (p.at("a") + p.at("c")) % 2 == 0; }},
                {"b != 20 when a == 3",
                 {},  // checked once every parameter is set
                 [](const Params& p) { return !(p.at("a") == 3 && p.at("b") == 20); }}});
}

TEST(SpaceTest, CartesianSizeIsTheProductWithoutExpanding) {
  std::vector<Parameter> parameters;
  for (int i = 0; i < 12; ++i) {
    parameters.push_back({"p" + std::to_string(i), {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ""});
  }
  const Space huge(parameters, {});
  EXPECT_EQ(huge.CartesianSize(), 1000000000000ull);
  // Decoding the last candidate is as cheap as the first.
  const Params last = huge.At(huge.CartesianSize() - 1);
  for (const auto& [name, value] : last) EXPECT_EQ(value, 9) << name;
  EXPECT_EQ(SmallSpace().CartesianSize(), 24u);
  EXPECT_EQ(Space().CartesianSize(), 0u);
}

TEST(SpaceTest, AtDecodesMixedRadixFirstParameterSlowest) {
  const Space space = SmallSpace();
  EXPECT_EQ(space.At(0), (Params{{"a", 1}, {"b", 10}, {"c", 5}}));
  EXPECT_EQ(space.At(1), (Params{{"a", 1}, {"b", 10}, {"c", 6}}));
  EXPECT_EQ(space.At(4), (Params{{"a", 1}, {"b", 20}, {"c", 5}}));
  EXPECT_EQ(space.At(8), (Params{{"a", 2}, {"b", 10}, {"c", 5}}));
  // index = ((a_i * 2) + b_i) * 4 + c_i
  EXPECT_EQ(space.At((2 * 2 + 1) * 4 + 3), (Params{{"a", 3}, {"b", 20}, {"c", 8}}));
}

TEST(SpaceTest, ViolationNamesTheFirstBrokenConstraint) {
  const Space space = SmallSpace();
  EXPECT_EQ(space.Violation({{"a", 1}, {"b", 10}, {"c", 5}}), std::nullopt);
  EXPECT_THAT(space.Violation({{"a", 1}, {"b", 10}, {"c", 6}}), Optional(std::string("a + c is even")));
  EXPECT_THAT(space.Violation({{"a", 3}, {"b", 20}, {"c", 5}}),
              Optional(std::string("b != 20 when a == 3")));
}

TEST(SpaceTest, CheckReportsMissingUnknownAndForeignValues) {
  const Space space = SmallSpace();
  EXPECT_TRUE(space.Check({{"a", 1}, {"b", 10}, {"c", 5}}, true).ok());
  absl::Status missing = space.Check({{"a", 1}, {"b", 10}}, false);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("missing parameter 'c'"));
  absl::Status unknown = space.Check({{"a", 1}, {"b", 10}, {"c", 5}, {"d", 1}}, false);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.message(), HasSubstr("unknown parameter 'd'"));
  // A value outside the list is fine unless strict.
  EXPECT_TRUE(space.Check({{"a", 4}, {"b", 10}, {"c", 5}}, false).ok());
  absl::Status foreign = space.Check({{"a", 4}, {"b", 10}, {"c", 5}}, true);
  EXPECT_EQ(foreign.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(foreign.message(), HasSubstr("a=4 is not in the space (values: 1,2,3)"));
}

// A parameter added to a space later may be absent from configurations recorded before it: they
// have its `absent` value. Others stay required.
TEST(SpaceTest, AParameterWithAnAbsentValueMayBeMissing) {
  const Space space({{"a", {1, 2}, ""}, {"late", {0, 1}, "added later", /*absent=*/0}}, {});
  EXPECT_TRUE(space.Check({{"a", 1}}, /*strict=*/true).ok());
  EXPECT_TRUE(space.Check({{"a", 1}, {"late", 1}}, /*strict=*/true).ok());
  EXPECT_THAT(space.Check({{"late", 1}}, true).message(), HasSubstr("missing parameter 'a'"));
  EXPECT_THAT(space.Check({{"a", 1}, {"late", 2}}, true).message(),
              HasSubstr("late=2 is not in the space"));
}

// Candidates given from outside come out in the space's one spelling: one written before `late`
// existed and the same with late=0 are one candidate; one written twice is refused.
TEST(SpaceTest, GivenCandidatesAreCompletedAndKeptOnce) {
  const Space space({{"a", {1, 2}, ""}, {"late", {0, 1}, "added later", /*absent=*/0}}, {});
  absl::StatusOr<std::vector<Params>> kept =
      space.AdmitCandidates({{{"a", 1}}, {{"a", 2}, {"late", 1}}, {{"a", 1}, {"late", 0}}});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, (std::vector<Params>{{{"a", 1}, {"late", 0}}, {{"a", 2}, {"late", 1}}}));
  EXPECT_THAT(space.AdmitCandidates({{{"a", 1}}, {{"a", 1}}}).status().message(),
              HasSubstr("candidates[1] repeats"));
  EXPECT_THAT(space.AdmitCandidates({{{"a", 1}}, {{"a", 3}}}).status().message(),
              HasSubstr("candidates[1]: parameter a=3 is not in the space"));
}

// A constraint that divides, like the families' (tile % vec == 0).
Space DividingSpace() {
  return Space({{"tile", {16, 32}, ""}, {"vec", {1, 2, 4}, ""}, {"pad", {0, 1}, ""}},
               {{"tile % vec == 0", {"tile", "vec"}, [](const Params& p) {
                   return p.at("tile") % p.at("vec") == 0;
                 }}});
}

TEST(SpaceTest, NonStrictCheckStillRefusesValuesAConstraintCouldDivideBy) {
  const Space space = DividingSpace();
  // Outside the list but of the list's kind: fine unless strict.
  EXPECT_TRUE(space.Check({{"tile", 48}, {"vec", 8}, {"pad", 2}}, false).ok());
  for (int64_t bad : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    absl::Status s = space.Check({{"tile", 16}, {"vec", bad}, {"pad", 0}}, false);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("parameter vec=", bad,
                                                    " must be positive (values: 1,2,4)")));
  }
  // A parameter whose list holds 0 may be 0 or below.
  EXPECT_TRUE(space.Check({{"tile", 16}, {"vec", 1}, {"pad", -1}}, false).ok());
}

TEST(SpaceTest, AdmitChecksTheParametersBeforeTheConstraints) {
  const Space space = DividingSpace();
  EXPECT_TRUE(space.Admit({{"tile", 32}, {"vec", 4}, {"pad", 1}}, true).ok());
  // vec=0 would divide by zero in the constraint: it never gets there.
  absl::Status zero = space.Admit({{"tile", 32}, {"vec", 0}, {"pad", 1}}, true);
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(zero.message(), HasSubstr("parameter vec=0 is not in the space (values: 1,2,4)"));
  zero = space.Admit({{"tile", 32}, {"vec", 0}, {"pad", 1}}, false);
  EXPECT_THAT(zero.message(), HasSubstr("parameter vec=0 must be positive"));
  absl::Status missing = space.Admit({{"tile", 32}, {"pad", 1}}, true);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("missing parameter 'vec'"));
  absl::Status broken = space.Admit({{"tile", 36}, {"vec", 8}, {"pad", 1}}, false);
  EXPECT_EQ(broken.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(broken.message(),
              HasSubstr("candidate pad=1,tile=36,vec=8 breaks a constraint: tile % vec == 0"));
  EXPECT_THAT(space.Admit({{"tile", 36}, {"vec", 8}, {"pad", 1}}, true).message(),
              HasSubstr("tile=36 is not in the space"));
}

TEST(SpaceTest, NarrowRestrictsValuesAndRejectsUnknowns) {
  const Space space = SmallSpace();
  absl::StatusOr<Space> narrowed = space.Narrow({{"a", {3, 1}}, {"c", {8}}});
  ASSERT_TRUE(narrowed.ok()) << narrowed.status();
  EXPECT_EQ(narrowed->CartesianSize(), 4u);
  EXPECT_EQ(narrowed->At(0), (Params{{"a", 3}, {"b", 10}, {"c", 8}}));
  EXPECT_EQ(narrowed->constraints().size(), 2u);

  absl::StatusOr<Space> unknown = space.Narrow({{"z", {1}}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown parameter 'z'"));
  absl::StatusOr<Space> foreign = space.Narrow({{"b", {30}}});
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(foreign.status().message(), HasSubstr("b=30 is not in the space"));
  absl::StatusOr<Space> empty = space.Narrow({{"b", {}}});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SpaceTest, ForEachValidVisitsValidCandidatesInIndexOrder) {
  const Space space = SmallSpace();
  std::vector<uint64_t> indices;
  space.ForEachValid([&](uint64_t index, const Params& params) {
    EXPECT_EQ(params, space.At(index));
    EXPECT_EQ(space.Violation(params), std::nullopt);
    indices.push_back(index);
  });
  uint64_t expected = 0;
  for (uint64_t i = 0; i < space.CartesianSize(); ++i) expected += !space.Violation(space.At(i));
  EXPECT_EQ(indices.size(), expected);
  EXPECT_EQ(indices.size(), 10u);  // a=1,2: 2 of 4 c values x 2 b; a=3: 2 c values x b=10
  EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));
}

// The walk checks a rule once the parameters it reads are set, and never looks at the
// combinations of later parameters that the rule rules out.
TEST(SpaceTest, ForEachValidChecksARuleOnceItsParametersAreSet) {
  int checks = 0;
  std::vector<Parameter> parameters = {{"first", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ""}};
  std::vector<Constraint> constraints = {{"first == 9", {"first"}, [&](const Params& p) {
                                            ++checks;
                                            return p.at("first") == 9;
                                          }}};
  for (int i = 0; i < 20; ++i) {
    const std::string name = "p" + std::to_string(i);
    parameters.push_back({name, {0, 1}, ""});
    constraints.push_back({name + " == 0", {name}, [&checks, name](const Params& p) {
                             ++checks;
                             return p.at(name) == 0;
                           }});
  }
  const Space space(parameters, constraints);
  ASSERT_EQ(space.CartesianSize(), uint64_t{10} << 20);
  std::vector<uint64_t> valid;
  space.ForEachValid([&](uint64_t index, const Params&) { valid.push_back(index); });
  EXPECT_EQ(valid, std::vector<uint64_t>{uint64_t{9} << 20});
  // 10 values of the first, 2 of each later one on the only branch left, every rule once more
  // for the candidate: 71, where checking every combination takes over ten million.
  EXPECT_EQ(checks, 10 + 2 * 20 + 21);
}

// A rule whose `reads` leave out a parameter it reads is checked early against whatever value that
// parameter holds then: it can lose valid candidates (DefaultSpaceTest guards the built-in spaces
// against it), but the check before fn keeps out every invalid one.
TEST(SpaceTest, ForEachValidNeverAdmitsWhatARuleWithMissingReadsBreaks) {
  const Space space({{"a", {1, 2}, ""}, {"b", {1, 2}, ""}},
                    {{"a != b", {"a"}, [](const Params& p) { return p.at("a") != p.at("b"); }}});
  std::vector<Params> seen;
  space.ForEachValid([&](uint64_t, const Params& params) { seen.push_back(params); });
  // a=1 was judged with b=1 (a=1, b=2 lost); a=2 with b=1, and a=2, b=2 refused before fn.
  EXPECT_EQ(seen, (std::vector<Params>{{{"a", 2}, {"b", 1}}}));
}

}  // namespace
}  // namespace cutune::kernels
