// The pure part of Kernel::Launch: the argument list built from an answer's contract and the
// checks made on the caller's pointers (no GPU needed).
#include "client/lib/launch_plan.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/offline_table.h"

namespace cutune::client {
namespace {

namespace pb = ::cutune::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

pb::GetBestConfigResponse AnswerFor(const std::string& family, std::vector<int64_t> shape) {
  auto table = service::OfflineTable::Open(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json");
  EXPECT_TRUE(table.ok()) << table.status();
  pb::GetBestConfigRequest request;
  request.mutable_problem()->set_family(family);
  for (int64_t d : shape) request.mutable_problem()->add_shape(d);
  auto answer = (*table)->Answer(request);
  EXPECT_TRUE(answer.ok()) << answer.status();
  return *answer;
}

TEST(LaunchPlanTest, MatmulArgumentsAreThePointersThenMNK) {
  auto plan = PlanLaunch(AnswerFor("matmul", {100, 200, 300}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->slots.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(plan->slots[i].pointer);
    EXPECT_EQ(plan->slots[i].index, i);
  }
  for (int i = 3; i < 6; ++i) {
    EXPECT_FALSE(plan->slots[i].pointer);
    EXPECT_EQ(plan->slots[i].index, i - 3);
  }
  EXPECT_THAT(plan->dims, ElementsAre(100, 200, 300));
  EXPECT_THAT(plan->output, ElementsAre(false, false, true));
  EXPECT_THAT(plan->bytes, ElementsAre(100 * 300 * 4, 300 * 200 * 4, 100 * 200 * 4));
  EXPECT_THAT(plan->names, ElementsAre("A", "B", "C"));
  EXPECT_EQ(plan->element_type, "f32");
  EXPECT_EQ(plan->alignment, 16u);
}

TEST(LaunchPlanTest, TransposeOutputIsColsByRows) {
  auto plan = PlanLaunch(AnswerFor("transpose", {7, 9}));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->dims, ElementsAre(7, 9));
  EXPECT_THAT(plan->bytes, ElementsAre(63 * 4, 63 * 4));
  EXPECT_THAT(plan->names, ElementsAre("in", "out"));
}

TEST(LaunchPlanTest, AnAnswerWithoutAContractIsRefused) {
  pb::GetBestConfigResponse old = AnswerFor("matmul", {64, 64, 64});
  old.clear_launch();
  auto plan = PlanLaunch(old);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(plan.status().message(), HasSubstr("no launch contract"));
}

TEST(LaunchPlanTest, PointersAreChecked) {
  auto plan = PlanLaunch(AnswerFor("matmul", {100, 200, 300}));
  ASSERT_TRUE(plan.ok());
  alignas(16) static float buffers[3][16];
  const Kernel::PointerInfo in{"f32", true}, out{"f32", false};
  uint64_t values[kMaxLaunchPointers] = {};
  const void* good[] = {buffers[0], buffers[1], buffers[2]};
  const Kernel::PointerInfo info[] = {in, in, out};
  ASSERT_TRUE(CheckLaunch(*plan, good, info, 3, values).ok());
  EXPECT_EQ(values[2], reinterpret_cast<uint64_t>(buffers[2]));

  auto message = [&](const void* const* p, const Kernel::PointerInfo* i, size_t n) {
    absl::Status s = CheckLaunch(*plan, p, i, n, values);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  EXPECT_THAT(message(good, info, 2), HasSubstr("takes 3 device pointers (A, B, C); got 2"));
  const void* null_b[] = {buffers[0], nullptr, buffers[2]};
  EXPECT_THAT(message(null_b, info, 3), HasSubstr("argument B is a null pointer"));
  const Kernel::PointerInfo doubles[] = {in, {nullptr, true}, out};
  EXPECT_THAT(message(good, doubles, 3), HasSubstr("argument B must point to f32 elements (float)"));
  const Kernel::PointerInfo const_out[] = {in, in, {"f32", true}};
  EXPECT_THAT(message(good, const_out, 3), HasSubstr("argument C is the output"));
  const void* misaligned[] = {buffers[0], buffers[1] + 1, buffers[2]};
  EXPECT_THAT(message(misaligned, info, 3), HasSubstr("argument B"));
  EXPECT_THAT(message(misaligned, info, 3), HasSubstr("not aligned to 16 bytes"));
}

}  // namespace
}  // namespace cutune::client
