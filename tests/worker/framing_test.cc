#include "server/worker/framing.h"

#include <sys/socket.h>
#include <unistd.h>

#include "cutune/v1/worker.pb.h"
#include "gtest/gtest.h"

namespace cutune::worker {
namespace {

class FramingTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST_F(FramingTest, RoundTrip) {
  v1::Request sent;
  sent.set_id(42);
  sent.mutable_run()->mutable_candidate()->set_cubin(std::string(100000, '\x7f'));
  ASSERT_TRUE(WriteFrame(fds_[0], sent).ok());
  v1::Request got;
  ASSERT_TRUE(ReadFrame(fds_[1], got, std::chrono::milliseconds(1000)).ok());
  EXPECT_EQ(got.id(), 42u);
  EXPECT_EQ(got.run().candidate().cubin().size(), 100000u);
}

TEST_F(FramingTest, TimeoutIsDeadlineExceeded) {
  v1::Request got;
  absl::Status s = ReadFrame(fds_[1], got, std::chrono::milliseconds(50));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
}

TEST_F(FramingTest, ClosedPeerIsUnavailable) {
  close(fds_[0]);
  fds_[0] = -1;
  v1::Request got;
  EXPECT_EQ(ReadFrame(fds_[1], got).code(), absl::StatusCode::kUnavailable);
  v1::Request sent;
  sent.set_id(1);
  EXPECT_EQ(WriteFrame(fds_[1], sent).code(), absl::StatusCode::kUnavailable);
}

TEST_F(FramingTest, OversizedFrameIsRejected) {
  const unsigned char header[4] = {0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(write(fds_[0], header, 4), 4);
  v1::Request got;
  EXPECT_EQ(ReadFrame(fds_[1], got, std::chrono::milliseconds(100)).code(),
            absl::StatusCode::kDataLoss);
}

TEST_F(FramingTest, GarbageIsDataLoss) {
  const unsigned char frame[7] = {3, 0, 0, 0, 0xff, 0xff, 0xff};
  ASSERT_EQ(write(fds_[0], frame, 7), 7);
  v1::Request got;
  EXPECT_EQ(ReadFrame(fds_[1], got, std::chrono::milliseconds(100)).code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace cutune::worker
