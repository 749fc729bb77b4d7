// The source a prediction model trains on, case by case: the current one where it has enough
// shapes; else the one most winners have, then the newest, then the smaller hash.
#include "server/store/training_source.h"

#include "gtest/gtest.h"

namespace cutune::store {
namespace {

std::vector<Winner> Winners(std::initializer_list<std::pair<const char*, int64_t>> sources) {
  std::vector<Winner> out;
  for (const auto& [source, at] : sources) {
    Winner w;
    w.provenance.source_hash = source;
    w.measured_at_ms = at;
    out.push_back(std::move(w));
  }
  return out;
}

std::string Source(const std::vector<Winner>& winners, std::string_view current,
                   size_t min_shapes = 2) {
  std::vector<const Winner*> pointers;
  for (const Winner& w : winners) pointers.push_back(&w);
  return TrainingSource(pointers, current, min_shapes);
}

TEST(TrainingSourceTest, NoWinnersNoSource) { EXPECT_EQ(Source({}, "new"), ""); }

TEST(TrainingSourceTest, TheCurrentSourceWithEnoughShapes) {
  // Three winners of an older source, two of the current one: the current one.
  const auto w = Winners({{"old", 1}, {"old", 2}, {"old", 3}, {"new", 4}, {"new", 5}});
  EXPECT_EQ(Source(w, "new"), "new");
}

TEST(TrainingSourceTest, TooFewCurrentShapesTrainOnTheMostCommonSource) {
  // One shape re-tuned with the current source is too few for a model: the older source's
  // grid answers until more are tuned.
  const auto w = Winners({{"old", 1}, {"old", 2}, {"old", 3}, {"new", 9}});
  EXPECT_EQ(Source(w, "new"), "old");
  // No current source known (an offline table server of another build): the most common.
  EXPECT_EQ(Source(w, ""), "old");
  // A current source no winner has: the most common.
  EXPECT_EQ(Source(w, "newer"), "old");
}

TEST(TrainingSourceTest, EqualCountsGoToTheNewestThenTheSmallerHash) {
  EXPECT_EQ(Source(Winners({{"a", 1}, {"a", 2}, {"b", 3}, {"b", 1}}), ""), "b");
  EXPECT_EQ(Source(Winners({{"b", 5}, {"a", 5}}), ""), "a");
}

}  // namespace
}  // namespace cutune::store
