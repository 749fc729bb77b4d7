#include "server/tuner/winner.h"

#include <algorithm>

#include "server/core/ties.h"

namespace cutune::tuner {

bool RanksBefore(const Measurement& a, const Measurement& b) {
  if (a.timing.median_us != b.timing.median_us) return a.timing.median_us < b.timing.median_us;
  return FormatParams(a.params) < FormatParams(b.params);
}

WinnerChoice ChooseWinner(const std::vector<Measurement>& rows,
                          const std::vector<size_t>& finalists,
                          const std::vector<size_t>& remeasured) {
  WinnerChoice choice;
  std::optional<size_t> fastest;
  for (size_t i : finalists) {
    if (rows[i].outcome != Outcome::kOk) continue;
    if (!fastest || RanksBefore(rows[i], rows[*fastest])) fastest = i;
  }
  if (!fastest) return choice;

  auto was_remeasured = [&](size_t i) {
    return std::find(remeasured.begin(), remeasured.end(), i) != remeasured.end();
  };
  // Tied() is false for a fastest without a median, which is still tied with itself.
  choice.tied.push_back(*fastest);
  if (was_remeasured(*fastest)) {
    for (size_t i : finalists) {
      if (i == *fastest || rows[i].outcome != Outcome::kOk || !was_remeasured(i)) continue;
      if (Tied(rows[i].timing, rows[*fastest].timing)) choice.tied.push_back(i);
    }
  }
  std::sort(choice.tied.begin(), choice.tied.end());
  choice.tied.erase(std::unique(choice.tied.begin(), choice.tied.end()), choice.tied.end());
  choice.winner =
      *std::min_element(choice.tied.begin(), choice.tied.end(),
                        [&](size_t a, size_t b) { return PreferredAmongTied(rows[a], rows[b]); });
  return choice;
}

std::vector<size_t> Challengers(const std::vector<Measurement>& rows,
                                const std::vector<size_t>& finalists, size_t room) {
  std::optional<size_t> fastest;
  for (size_t i : finalists) {
    if (rows[i].outcome != Outcome::kOk) continue;
    if (!fastest || RanksBefore(rows[i], rows[*fastest])) fastest = i;
  }
  std::vector<size_t> out;
  if (!fastest || room == 0) return out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].outcome != Outcome::kOk || !RanksBefore(rows[i], rows[*fastest])) continue;
    if (std::find(finalists.begin(), finalists.end(), i) != finalists.end()) continue;
    out.push_back(i);
  }
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return RanksBefore(rows[a], rows[b]); });
  if (out.size() > room) out.resize(room);
  return out;
}

}  // namespace cutune::tuner
