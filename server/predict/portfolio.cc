#include "server/predict/portfolio.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "server/core/ties.h"

namespace cutune::predict {

double ShapeDistance(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] <= 0 || b[i] <= 0) return std::numeric_limits<double>::infinity();
    d += std::fabs(std::log2(static_cast<double>(a[i]) / static_cast<double>(b[i])));
  }
  return d;
}

double Portfolio::Coverage() const {
  size_t cells = 0, measured = 0;
  for (const auto& row : time_us) {
    for (double t : row) {
      ++cells;
      measured += t > 0;
    }
  }
  return cells == 0 ? 0 : static_cast<double>(measured) / static_cast<double>(cells);
}

std::vector<ResourceUsage> MemberResources(const std::vector<Params>& members,
                                           const std::vector<TunedShape>& tuned,
                                           const std::vector<Observation>& observations) {
  std::vector<ResourceUsage> out(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    const auto won = std::find_if(tuned.begin(), tuned.end(), [&](const TunedShape& t) {
      return t.winner == members[m] && t.resources.registers > 0;
    });
    if (won != tuned.end()) {
      out[m] = won->resources;
      continue;
    }
    const Observation* seen = nullptr;  // the least shape's, whatever the order given
    for (const Observation& o : observations) {
      if (o.params == members[m] && o.resources.registers > 0 && (!seen || o.shape < seen->shape)) {
        seen = &o;
      }
    }
    if (seen) out[m] = seen->resources;
  }
  return out;
}

CandidateMatrix MakeCandidateMatrix(const std::vector<TunedShape>& tuned,
                                    const std::vector<Observation>& observations) {
  CandidateMatrix m;
  std::map<Shape, size_t> shape_index;
  std::vector<const Params*> winners;
  for (const TunedShape& t : tuned) {
    if (!(t.winner_us > 0) || shape_index.count(t.shape)) continue;
    shape_index.emplace(t.shape, m.shapes.size());
    m.shapes.push_back(t.shape);
    m.best_us.push_back(t.winner_us);
    winners.push_back(&t.winner);
  }
  // Candidates: the winners and the configurations measured at half the shapes or more, in
  // canonical order so that equal gains pick deterministically.
  std::map<Params, std::set<size_t>> seen_at;
  for (const Observation& o : observations) {
    auto s = shape_index.find(o.shape);
    if (s != shape_index.end() && o.time_us > 0) seen_at[o.params].insert(s->second);
  }
  std::map<Params, size_t> candidate_index;
  for (const TunedShape& t : tuned) {
    if (t.winner_us > 0) candidate_index.emplace(t.winner, 0);
  }
  for (const auto& [params, shapes] : seen_at) {
    if (2 * shapes.size() >= m.shapes.size()) candidate_index.emplace(params, 0);
  }
  for (auto& [params, index] : candidate_index) {
    index = m.candidates.size();
    m.candidates.push_back(params);
  }
  m.time.assign(m.shapes.size(), std::vector<double>(m.candidates.size(), 0));
  auto note = [&](const Shape& shape, const Params& params, double us) {
    auto s = shape_index.find(shape);
    auto c = candidate_index.find(params);
    if (s == shape_index.end() || c == candidate_index.end() || !(us > 0)) return;
    double& cell = m.time[s->second][c->second];
    if (cell == 0 || us < cell) cell = us;
  };
  for (const Observation& o : observations) note(o.shape, o.params, o.time_us);
  for (const TunedShape& t : tuned) note(t.shape, t.winner, t.winner_us);
  for (size_t s = 0; s < m.shapes.size(); ++s) {
    for (double cell : m.time[s]) {
      if (cell > 0) m.best_us[s] = std::min(m.best_us[s], cell);
    }
  }
  // Only winners and near-winners stay.
  std::vector<bool> keep(m.candidates.size(), false);
  for (const Params* w : winners) keep[candidate_index.at(*w)] = true;
  for (size_t c = 0; c < m.candidates.size(); ++c) {
    for (size_t s = 0; s < m.shapes.size() && !keep[c]; ++s) keep[c] = IsNearWinner(m, s, c);
  }
  std::vector<size_t> renumbered(m.candidates.size());
  std::vector<Params> kept;
  for (size_t c = 0; c < m.candidates.size(); ++c) {
    renumbered[c] = kept.size();
    if (keep[c]) kept.push_back(std::move(m.candidates[c]));
  }
  for (auto& row : m.time) {
    std::vector<double> out;
    for (size_t c = 0; c < row.size(); ++c) {
      if (keep[c]) out.push_back(row[c]);
    }
    row = std::move(out);
  }
  m.candidates = std::move(kept);
  for (const Params* w : winners) m.winner_of.push_back(renumbered[candidate_index.at(*w)]);
  return m;
}

bool IsNearWinner(const CandidateMatrix& m, size_t shape, size_t candidate) {
  const double t = m.time[shape][candidate];
  return t > 0 && t <= m.best_us[shape] * (1 + kNearWinner);
}

Portfolio SelectPortfolio(const CandidateMatrix& m, const std::vector<bool>& include,
                          size_t max_members, std::vector<size_t>* chosen_candidates) {
  const size_t shapes = m.shapes.size();
  // Candidates: the winners and near-winners of the included shapes.
  std::vector<bool> eligible(m.candidates.size(), false);
  for (size_t s = 0; s < shapes; ++s) {
    if (!include[s]) continue;
    eligible[m.winner_of[s]] = true;
    for (size_t c = 0; c < m.candidates.size(); ++c) {
      if (IsNearWinner(m, s, c)) eligible[c] = true;
    }
  }
  // Greedy selection on the sum over included shapes and covers k of kCoverWeights[k] times
  // log(the k-th best member's score there).
  using Covers = std::array<double, kCoverWeights.size()>;
  Covers uncovered;
  uncovered.fill(kUncovered);
  std::vector<Covers> covers(shapes, uncovered);
  // Only a candidate measured at half the included shapes or more counts past the first cover:
  // one known at a few shapes (a winner the matrix did not measure elsewhere) tells the model
  // nothing about the shapes around them.
  size_t included = 0;
  std::vector<size_t> measured(m.candidates.size(), 0);
  for (size_t s = 0; s < shapes; ++s) {
    if (!include[s]) continue;
    ++included;
    for (size_t c = 0; c < m.candidates.size(); ++c) measured[c] += m.time[s][c] > 0;
  }
  // A shape's covers with candidate c added (its score inserted in order, the last dropped).
  auto with = [&](const Covers& old, size_t c, double score) {
    Covers next = old;
    if (2 * measured[c] < included) {
      next[0] = std::max(next[0], score);
      return next;
    }
    for (size_t k = 0; k < next.size(); ++k) {
      if (score > next[k]) std::swap(score, next[k]);
    }
    return next;
  };
  auto value = [](const Covers& covered) {
    double v = 0;
    for (size_t k = 0; k < covered.size(); ++k) v += kCoverWeights[k] * std::log(covered[k]);
    return v;
  };
  std::vector<bool> chosen(m.candidates.size(), false);
  std::vector<size_t> order;
  while (order.size() < max_members) {
    double best_gain = 0;
    std::optional<size_t> best;
    for (size_t c = 0; c < m.candidates.size(); ++c) {
      if (chosen[c] || !eligible[c]) continue;
      double gain = 0;
      for (size_t s = 0; s < shapes; ++s) {
        if (!include[s] || m.time[s][c] <= 0) continue;
        const double score = std::min(1.0, m.best_us[s] / m.time[s][c]);
        gain += value(with(covers[s], c, score)) - value(covers[s]);
      }
      // Gains within a relative 1e-4 are equal (a table rounds times to 6 digits): the
      // canonically first candidate keeps the step.
      if (gain > best_gain * (1 + 1e-4) + 1e-12) {
        best_gain = gain;
        best = c;
      }
    }
    if (!best) break;
    chosen[*best] = true;
    order.push_back(*best);
    for (size_t s = 0; s < shapes; ++s) {
      if (!include[s] || m.time[s][*best] <= 0) continue;
      covers[s] = with(covers[s], *best, std::min(1.0, m.best_us[s] / m.time[s][*best]));
    }
  }
  // Members in canonical order: the set is what the greedy chose, the order independent of it.
  std::sort(order.begin(), order.end());
  Portfolio out;
  for (size_t c : order) out.members.push_back(m.candidates[c]);
  for (size_t s = 0; s < shapes; ++s) {
    if (!include[s]) continue;
    out.shapes.push_back(m.shapes[s]);
    out.best_us.push_back(m.best_us[s]);
    std::vector<double> row;
    for (size_t c : order) row.push_back(m.time[s][c]);
    out.time_us.push_back(std::move(row));
  }
  if (chosen_candidates != nullptr) *chosen_candidates = order;
  return out;
}

Portfolio BuildPortfolio(const std::vector<TunedShape>& tuned,
                         const std::vector<Observation>& observations, size_t max_members) {
  const CandidateMatrix m = MakeCandidateMatrix(tuned, observations);
  return SelectPortfolio(m, std::vector<bool>(m.shapes.size(), true), max_members);
}

std::vector<Params> NearestWinners(const std::vector<TunedShape>& tuned, const Shape& shape,
                                   size_t max) {
  std::vector<std::pair<double, const Params*>> ranked;
  for (const TunedShape& t : tuned) ranked.push_back({ShapeDistance(t.shape, shape), &t.winner});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return CanonicalBefore(*a.second, *b.second);
  });
  std::vector<Params> out;
  for (const auto& [distance, params] : ranked) {
    if (out.size() == max) break;
    if (std::find(out.begin(), out.end(), *params) == out.end()) out.push_back(*params);
  }
  return out;
}

}  // namespace cutune::predict
