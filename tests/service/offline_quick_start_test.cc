// What a daemon holding only the shipped H200 table starts ANSWER_NOW_AND_TUNE's quick sweep from
// on GPUs the table does not hold: another Hopper starts from the H200's portfolio, ranked for
// the shape; another architecture from the baseline. Before store/quick_start.h, every GPU but
// the H200 started from the baseline alone, and on an H100 the descent from it ended at 12-31%
// of cuBLAS on the awkward shapes (bench/results/unseen-shapes.md, section 18).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/family.h"
#include "server/predict/portfolio.h"
#include "server/service/offline_table.h"

namespace cutune::service {
namespace {

using ::testing::ElementsAre;

class OfflineQuickStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto table = OfflineTable::Open(std::string(CUTUNE_TABLES_DIR) + "/nvidia-h200.json");
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = *std::move(table);
  }
  std::vector<Params> Start(const store::DeviceModel& device, const Shape& shape) const {
    auto start = table_->QuickStart(device, matmul_, DType::kF32, shape);
    EXPECT_TRUE(start.ok()) << start.status();
    return start.ok() ? *start : std::vector<Params>{};
  }

  const kernels::KernelFamily& matmul_ = *kernels::FindFamily("matmul");
  const store::DeviceModel h200_{"NVIDIA H200", 9, 0, 132, int64_t{141} << 30};
  const store::DeviceModel h100_{"NVIDIA H100 80GB HBM3", 9, 0, 132, int64_t{80} << 30};
  const store::DeviceModel a100_{"NVIDIA A100-SXM4-80GB", 8, 0, 108, int64_t{80} << 30};
  std::unique_ptr<OfflineTable> table_;
};

TEST_F(OfflineQuickStartTest, AnotherHopperStartsFromTheH200sPortfolio) {
  for (const Shape& shape : {Shape{2048, 512, 8192}, Shape{127, 8192, 4096}, Shape{16, 16, 16}}) {
    const std::vector<Params> h100 = Start(h100_, shape);
    EXPECT_EQ(h100, Start(h200_, shape)) << FormatShape(shape);
    // The portfolio ranked for the shape, topped up with the nearest winners, then the baseline.
    ASSERT_EQ(h100.size(), predict::kMaxMembers + 1) << FormatShape(shape);
    EXPECT_EQ(h100.back(), matmul_.baseline());
  }
  // Ranked for the shape: a skinny K-heavy shape and a tiny one lead with different members.
  EXPECT_NE(Start(h100_, {2048, 512, 8192}).front(), Start(h100_, {16, 16, 16}).front());
}

TEST_F(OfflineQuickStartTest, AnotherArchitectureStartsFromTheBaseline) {
  EXPECT_THAT(Start(a100_, {2048, 512, 8192}), ElementsAre(matmul_.baseline()));
}

}  // namespace
}  // namespace cutune::service
