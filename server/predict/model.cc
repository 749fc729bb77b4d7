#include "server/predict/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace cutune::predict {
namespace {

double Work(const Shape& shape) {
  double work = 1;
  for (int64_t d : shape) work *= static_cast<double>(d);
  return work;
}

// Solves a x = b (n x n, row-major) by Gaussian elimination with partial pivoting; nothing when
// it is singular.
std::optional<std::vector<double>> Solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    if (!(std::fabs(a[pivot][c]) > 1e-300)) return std::nullopt;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (size_t i = 0; i < n; ++i) b[i] /= a[i][i];
  return b;
}

}  // namespace

std::vector<double> FitNonNegative(const std::vector<std::vector<double>>& x,
                                   const std::vector<double>& y, const std::vector<double>& w) {
  if (x.empty()) return {};
  const size_t n = x.front().size();
  std::vector<double> coefficients(n, 0);
  // Columns scaled to their largest magnitude; an all-zero column stays out.
  std::vector<double> scale(n, 0);
  for (const std::vector<double>& row : x) {
    for (size_t j = 0; j < n; ++j) scale[j] = std::max(scale[j], std::fabs(row[j]));
  }
  std::vector<size_t> active;
  for (size_t j = 0; j < n; ++j) {
    if (scale[j] > 0) active.push_back(j);
  }
  while (!active.empty()) {
    const size_t k = active.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k, 0));
    std::vector<double> b(k, 0);
    for (size_t i = 0; i < x.size(); ++i) {
      for (size_t p = 0; p < k; ++p) {
        const double xp = x[i][active[p]] / scale[active[p]];
        b[p] += w[i] * xp * y[i];
        for (size_t q = 0; q < k; ++q) a[p][q] += w[i] * xp * x[i][active[q]] / scale[active[q]];
      }
    }
    for (size_t p = 0; p < k; ++p) a[p][p] += 1e-12 * (a[p][p] + 1);  // a whisker of ridge
    const std::optional<std::vector<double>> c = Solve(std::move(a), std::move(b));
    if (!c) return coefficients;
    const size_t most_negative =
        static_cast<size_t>(std::min_element(c->begin(), c->end()) - c->begin());
    if ((*c)[most_negative] < 0) {
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(most_negative));
      continue;
    }
    for (size_t p = 0; p < k; ++p) coefficients[active[p]] = (*c)[p] / scale[active[p]];
    return coefficients;
  }
  return coefficients;
}

std::vector<double> Model::Features(const Shape& shape) const {
  std::vector<double> f;
  f.reserve(2 * shape.size());
  for (int64_t d : shape) f.push_back(std::log2(static_cast<double>(std::max<int64_t>(d, 1))));
  for (int64_t d : shape) f.push_back(d % 4 != 0 ? options_.unaligned_penalty : 0.0);
  return f;
}

std::vector<LaunchFit> Model::FitsAt(const Shape& shape) const {
  std::vector<LaunchFit> fits(portfolio_.members.size());
  if (!fit_) return fits;
  for (size_t m = 0; m < fits.size(); ++m) {
    fits[m] = fit_(portfolio_.members[m], shape, member_resources_[m]);
  }
  return fits;
}

double Model::CostTime(size_t member, const LaunchFit& fit) const {
  const std::vector<double>& c = cost_[member];
  if (c.empty() || c.size() != fit.cost_terms.size() + 1) return 0;
  double t = c[0];
  for (size_t j = 0; j < fit.cost_terms.size(); ++j) t += c[j + 1] * fit.cost_terms[j];
  return t;
}

void Model::Precompute(const std::vector<TunedShape>& tuned,
                       const std::vector<Observation>& observations) {
  const Portfolio& p = portfolio_;
  member_resources_ = MemberResources(p.members, tuned, observations);
  shape_features_.clear();
  fit_at_.clear();
  least_work_ = 0;
  for (const Shape& shape : p.shapes) {
    shape_features_.push_back(Features(shape));
    fit_at_.push_back(FitsAt(shape));
    least_work_ = least_work_ > 0 ? std::min(least_work_, Work(shape)) : Work(shape);
  }
  floor_us_.assign(p.members.size(), 0);
  for (size_t m = 0; m < floor_us_.size(); ++m) floor_us_[m] = LatencyFloor(m);
  // Each member's cost model, weighted for relative error (1 / t^2): a latency and a
  // coefficient per term, from the shapes where it was measured and has terms.
  cost_.assign(p.members.size(), {});
  for (size_t m = 0; m < p.members.size(); ++m) {
    std::vector<std::vector<double>> x;
    std::vector<double> y, w;
    for (size_t s = 0; s < p.shapes.size(); ++s) {
      const double t = p.Time(s, m);
      const std::vector<double>& terms = fit_at_[s][m].cost_terms;
      if (!(t > 0) || terms.empty()) continue;
      std::vector<double> row = {1.0};
      row.insert(row.end(), terms.begin(), terms.end());
      if (!x.empty() && row.size() != x.front().size()) continue;
      x.push_back(std::move(row));
      y.push_back(t);
      w.push_back(1 / (t * t));
    }
    // Fewer measured shapes than coefficients (twice over) leave it without one.
    if (x.empty() || x.size() < 2 * x.front().size()) continue;
    std::vector<double> c = FitNonNegative(x, y, w);
    // A fit that found nothing (all zeros: a singular system) would predict every shape free.
    if (std::any_of(c.begin(), c.end(), [](double v) { return v > 0; })) cost_[m] = std::move(c);
  }
}

double Model::LatencyFloor(size_t member) const {
  // The two measured shapes of least work: the line through their times, at no work, clamped
  // to [0, the lesser time].
  std::vector<std::pair<double, double>> measured;  // (work, time)
  for (size_t s = 0; s < portfolio_.shapes.size(); ++s) {
    const double t = portfolio_.Time(s, member);
    if (t > 0) measured.push_back({Work(portfolio_.shapes[s]), t});
  }
  if (measured.empty()) return 0;
  std::sort(measured.begin(), measured.end());
  const auto [w1, t1] = measured[0];
  if (measured.size() == 1 || !(measured[1].first > w1)) return t1;
  const auto [w2, t2] = measured[1];
  const double slope = (t2 - t1) / (w2 - w1);
  return std::clamp(t1 - slope * w1, 0.0, t1);
}

namespace {

double Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += std::fabs(a[i] - b[i]);
  return d;
}

// log(there / here) of one fit's efficiency; 0 when either is unknown.
double FitCorrection(const LaunchFit& there, const LaunchFit& here) {
  return there.efficiency > 0 && here.efficiency > 0 ? std::log(there.efficiency / here.efficiency)
                                                     : 0.0;
}

}  // namespace

std::vector<std::pair<double, size_t>> Model::Neighbours(const Shape& shape) const {
  const std::vector<double> asked = Features(shape);
  std::vector<std::pair<double, size_t>> near(portfolio_.shapes.size());
  for (size_t s = 0; s < near.size(); ++s) near[s] = {Distance(shape_features_[s], asked), s};
  const size_t k = std::min(near.size(), std::max<size_t>(options_.neighbours, 1));
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
  near.resize(k);
  return near;
}

namespace {

bool Predictable(const Portfolio& p, const Shape& shape) {
  if (p.empty() || p.shapes.empty() || p.shapes.front().size() != shape.size()) return false;
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
}

}  // namespace

Model::Asked Model::Ask(const Shape& shape) const {
  return {shape, FitsAt(shape), Neighbours(shape)};
}

std::vector<double> Model::Scores(const Asked& asked, bool clipped, bool measured_only) const {
  const Portfolio& p = portfolio_;
  const std::vector<LaunchFit>& asked_fit = asked.fits;
  const std::vector<std::pair<double, size_t>>& near = asked.near;
  // The median member's fit correction from each neighbour to the asked shape.
  std::vector<double> median_correction;
  for (const auto& [d, s] : near) {
    std::vector<double> c(p.members.size());
    for (size_t m = 0; m < c.size(); ++m) c[m] = FitCorrection(fit_at_[s][m], asked_fit[m]);
    const auto mid = c.begin() + static_cast<std::ptrdiff_t>(c.size() / 2);
    std::nth_element(c.begin(), mid, c.end());
    median_correction.push_back(*mid);
  }
  std::vector<double> scores(p.members.size(), 0);
  for (size_t m = 0; m < p.members.size(); ++m) {
    double sum = 0, weights = 0;
    for (size_t i = 0; i < near.size(); ++i) {
      const auto [d, s] = near[i];
      const double w = 1.0 / (d + options_.distance_offset);
      const double t = p.Time(s, m);
      if (measured_only && !(t > 0)) continue;
      double v = t > 0 ? std::log(t / p.best_us[s]) : std::log(options_.unmeasured_slowdown);
      v += FitCorrection(fit_at_[s][m], asked_fit[m]) - median_correction[i];
      sum += w * (clipped ? std::max(v, 0.0) : v);
      weights += w;
    }
    scores[m] = weights > 0 ? sum / weights : std::log(options_.unmeasured_slowdown);
  }
  return scores;
}

namespace {
constexpr double kLeastTimeUs = 1e-3;  // a cost model's time is floored here before its log
}  // namespace

double Model::FlooredCostTime(size_t member, const LaunchFit& fit) const {
  return std::max({CostTime(member, fit), floor_us_[member], kLeastTimeUs});
}

double Model::CostError(size_t member, const std::vector<std::pair<double, size_t>>& near) const {
  double sum = 0, weights = 0;
  for (const auto& [d, s] : near) {
    const double t = portfolio_.Time(s, member);
    if (!(t > 0)) continue;
    const double w = 1.0 / (d + options_.distance_offset);
    sum += w * std::log(t / std::max(CostTime(member, fit_at_[s][member]), kLeastTimeUs));
    weights += w;
  }
  return weights > 0 ? sum / weights : 0;
}

bool Model::CostApplies(const Shape& shape) const {
  return Predictable(portfolio_, shape) && Work(shape) >= least_work_;
}

std::vector<double> Model::CostScores(const Asked& asked) const {
  if (!CostApplies(asked.shape)) return {};
  const std::vector<LaunchFit>& asked_fit = asked.fits;
  // A member without a cost model (measured at too few shapes) is not compared by it.
  std::vector<double> scores(portfolio_.members.size(), std::numeric_limits<double>::infinity());
  bool any = false;
  for (size_t m = 0; m < scores.size(); ++m) {
    if (cost_[m].empty() || !(CostTime(m, asked_fit[m]) > 0)) continue;
    any = true;
    const double error = CostError(m, asked.near);
    scores[m] = std::log(FlooredCostTime(m, asked_fit[m])) +
                (error > 0 ? options_.underestimate_weight : options_.residual_weight) * error;
  }
  if (!any) return {};
  return scores;
}

std::vector<std::pair<double, double>> Model::Ranking(const Asked& asked) const {
  const std::vector<double> by_cost = CostScores(asked);
  std::vector<std::pair<double, double>> out;
  if (!by_cost.empty()) {
    for (double c : by_cost) out.push_back({c, 0.0});
    return out;
  }
  const std::vector<double> clipped = Scores(asked), unclipped = Scores(asked, false);
  for (size_t m = 0; m < clipped.size(); ++m) out.push_back({clipped[m], unclipped[m]});
  return out;
}

std::optional<Prediction> Model::Predict(const Shape& shape) const {
  if (!Predictable(portfolio_, shape)) return std::nullopt;
  const Asked a = Ask(shape);
  const std::vector<double> slowdowns = Scores(a, /*clipped=*/true, /*measured_only=*/true);
  const std::vector<std::pair<double, double>> ranking = Ranking(a);
  if (ranking.empty()) return std::nullopt;
  const size_t m = static_cast<size_t>(std::min_element(ranking.begin(), ranking.end()) -
                                       ranking.begin());
  const Portfolio& p = portfolio_;
  Prediction out;
  out.member = m;
  out.params = p.members[m];
  out.raw_slowdown = std::exp(slowdowns[m]);
  out.expected_slowdown = std::max(1.0, out.raw_slowdown * calibration_);
  // The time. With a cost model: its time at the asked shape times its whole weighted error at
  // the neighbours. Without: each measuring neighbour's time above the member's latency floor
  // scaled by the work and by how the launch fits, on top of the floor, averaged in log space
  // with the neighbours' weights. The nearest measuring neighbour is reported as measured.
  const std::vector<double> asked = Features(shape);
  const LaunchFit& at_asked = a.fits[m];
  std::vector<std::pair<double, size_t>> near;
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    if (!(p.Time(s, m) > 0)) continue;
    near.push_back({Distance(shape_features_[s], asked), s});
  }
  std::sort(near.begin(), near.end());
  near.resize(std::min(near.size(), std::max<size_t>(options_.neighbours, 1)));
  if (near.empty()) return out;
  out.measured_shape = p.shapes[near.front().second];
  out.measured_us = p.Time(near.front().second, m);
  if (!cost_[m].empty() && CostApplies(shape)) {
    out.predicted_time_us = FlooredCostTime(m, at_asked) * std::exp(CostError(m, a.near));
    return out;
  }
  double sum = 0, weights = 0;
  for (const auto& [distance, s] : near) {
    const double w = 1.0 / (distance + options_.distance_offset);
    const double floor = floor_us_[m];
    const double scaled = (p.Time(s, m) - floor) * (Work(shape) / Work(p.shapes[s])) *
                          std::exp(FitCorrection(fit_at_[s][m], at_asked));
    sum += w * std::log(floor + scaled);
    weights += w;
  }
  out.predicted_time_us = std::exp(sum / weights);
  return out;
}

std::vector<Params> Model::Ranked(const Shape& shape) const {
  const std::vector<std::pair<double, double>> scores =
      Predictable(portfolio_, shape) ? Ranking(Ask(shape)) : std::vector<std::pair<double, double>>{};
  std::vector<size_t> order(portfolio_.members.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!scores.empty()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  }
  std::vector<Params> out;
  for (size_t m : order) out.push_back(portfolio_.members[m]);
  return out;
}

Evaluation Model::LeaveOneShapeOut(const std::vector<TunedShape>& tuned,
                                   const std::vector<Observation>& observations,
                                   const FitFn& fit, const ModelOptions& options) {
  const CandidateMatrix m = MakeCandidateMatrix(tuned, observations);
  Evaluation out;
  std::vector<bool> include(m.shapes.size(), true);
  for (size_t q = 0; q < m.shapes.size(); ++q) {
    include[q] = false;
    Model model;
    std::vector<size_t> members;
    model.portfolio_ = SelectPortfolio(m, include, kMaxMembers, &members);
    model.fit_ = fit;
    model.options_ = options;
    model.Precompute(tuned, observations);
    include[q] = true;
    const std::optional<Prediction> pick = model.Predict(m.shapes[q]);
    if (!pick) continue;
    const double picked = m.time[q][members[pick->member]];
    // The nearest other tuned shape's winner (the NEAREST_SHAPE rung's answer).
    std::optional<size_t> nearest;
    for (size_t s = 0; s < m.shapes.size(); ++s) {
      if (s == q) continue;
      if (!nearest || ShapeDistance(m.shapes[s], m.shapes[q]) <
                          ShapeDistance(m.shapes[*nearest], m.shapes[q])) {
        nearest = s;
      }
    }
    const double nearest_time = nearest ? m.time[q][m.winner_of[*nearest]] : 0;
    if (!(picked > 0)) continue;
    out.shapes.push_back(m.shapes[q]);
    out.model_ratio.push_back(m.best_us[q] / picked);
    out.nearest_ratio.push_back(nearest_time > 0 ? m.best_us[q] / nearest_time : 0);
    double fastest = picked;
    for (size_t c : members) {
      if (m.time[q][c] > 0) fastest = std::min(fastest, m.time[q][c]);
    }
    out.oracle_ratio.push_back(m.best_us[q] / fastest);
    out.predicted_slowdown.push_back(pick->raw_slowdown);
    out.actual_slowdown.push_back(picked / m.best_us[q]);
    out.time_ratio.push_back(pick->predicted_time_us / picked);
  }
  return out;
}

Model Model::Train(const std::vector<TunedShape>& tuned,
                   const std::vector<Observation>& observations, FitFn fit,
                   ModelOptions options) {
  Model model;
  model.portfolio_ = BuildPortfolio(tuned, observations);
  model.fit_ = std::move(fit);
  model.options_ = options;
  model.Precompute(tuned, observations);
  model.evaluation_ = LeaveOneShapeOut(tuned, observations, model.fit_, options);
  const Evaluation& e = model.evaluation_;
  if (!e.shapes.empty()) {
    std::vector<double> ratio;
    for (size_t i = 0; i < e.shapes.size(); ++i) {
      ratio.push_back(e.actual_slowdown[i] / e.predicted_slowdown[i]);
    }
    std::nth_element(ratio.begin(), ratio.begin() + static_cast<std::ptrdiff_t>(ratio.size() / 2),
                     ratio.end());
    model.calibration_ = std::max(1.0, ratio[ratio.size() / 2]);
  }
  return model;
}

Judgement JudgeAnswers(const std::vector<TunedShape>& tuned,
                       const std::vector<Observation>& observations, const AnswerFn& answer) {
  // Each tuned shape's answer first, then one pass over the observations for their times (a
  // daemon's store holds every row of its full sweeps).
  std::map<Shape, std::pair<Params, double>> answered;  // shape -> (answer, fastest time)
  std::vector<const TunedShape*> order;
  for (const TunedShape& t : tuned) {
    if (!(t.winner_us > 0) || answered.count(t.shape)) continue;
    std::optional<Params> params = answer(t.shape);
    if (!params) continue;
    answered.emplace(t.shape, std::pair(*std::move(params), 0.0));
    order.push_back(&t);
  }
  auto note = [&](const Shape& shape, const Params& params, double us) {
    auto it = answered.find(shape);
    if (it == answered.end() || !(us > 0) || it->second.first != params) return;
    double& fastest = it->second.second;
    if (fastest == 0 || us < fastest) fastest = us;
  };
  for (const Observation& o : observations) note(o.shape, o.params, o.time_us);
  for (const TunedShape& t : tuned) note(t.shape, t.winner, t.winner_us);
  Judgement out;
  for (const TunedShape* t : order) {
    const double fastest = answered.at(t->shape).second;
    if (!(fastest > 0)) continue;
    out.shapes.push_back(t->shape);
    out.ratio.push_back(t->winner_us / fastest);
    out.params.push_back(answered.at(t->shape).first);
    out.time_us.push_back(fastest);
  }
  return out;
}

bool Comparison::OtherIsBetter() const {
  return shapes >= Model::kMinPredictedShapes && other > own * kMargin;
}

Comparison CompareOnOwnShapes(const Evaluation& own, const Judgement& other) {
  Comparison out;
  double own_log = 0;
  double other_log = 0;
  for (size_t i = 0; i < own.shapes.size(); ++i) {
    auto at = std::find(other.shapes.begin(), other.shapes.end(), own.shapes[i]);
    if (at == other.shapes.end() || !(own.model_ratio[i] > 0) ||
        !(other.ratio[static_cast<size_t>(at - other.shapes.begin())] > 0)) {
      continue;
    }
    // A ratio over 1 is a winner re-measured slower than its rival: noise, counted as a tie.
    own_log += std::log(std::min(1.0, own.model_ratio[i]));
    other_log +=
        std::log(std::min(1.0, other.ratio[static_cast<size_t>(at - other.shapes.begin())]));
    ++out.shapes;
  }
  if (out.shapes > 0) {
    out.own = std::exp(own_log / static_cast<double>(out.shapes));
    out.other = std::exp(other_log / static_cast<double>(out.shapes));
  }
  return out;
}

}  // namespace cutune::predict
