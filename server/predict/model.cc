#include "server/predict/model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace cutune::predict {
namespace {

double Work(const Shape& shape) {
  double work = 1;
  for (int64_t d : shape) work *= static_cast<double>(d);
  return work;
}

}  // namespace

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
  for (size_t m = 0; m < fits.size(); ++m) fits[m] = fit_(portfolio_.members[m], shape);
  return fits;
}

void Model::Precompute() {
  shape_features_.clear();
  fit_at_.clear();
  for (const Shape& shape : portfolio_.shapes) {
    shape_features_.push_back(Features(shape));
    fit_at_.push_back(FitsAt(shape));
  }
  floor_us_.assign(portfolio_.members.size(), 0);
  for (size_t m = 0; m < floor_us_.size(); ++m) floor_us_[m] = LatencyFloor(m);
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

std::vector<double> Model::Scores(const Shape& shape) const {
  const Portfolio& p = portfolio_;
  if (p.empty() || p.shapes.empty() || p.shapes.front().size() != shape.size()) return {};
  for (int64_t d : shape) {
    if (d <= 0) return {};
  }
  const std::vector<double> asked = Features(shape);
  const std::vector<LaunchFit> asked_fit = FitsAt(shape);
  std::vector<double> distance(p.shapes.size());
  for (size_t s = 0; s < p.shapes.size(); ++s) distance[s] = Distance(shape_features_[s], asked);
  const size_t k = std::min(p.shapes.size(), std::max<size_t>(options_.neighbours, 1));
  std::vector<std::pair<double, size_t>> near(p.shapes.size());
  for (size_t s = 0; s < p.shapes.size(); ++s) near[s] = {distance[s], s};
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
  near.resize(k);
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
      double v = t > 0 ? std::log(t / p.best_us[s]) : std::log(options_.unmeasured_slowdown);
      v += FitCorrection(fit_at_[s][m], asked_fit[m]) - median_correction[i];
      sum += w * std::max(v, 0.0);
      weights += w;
    }
    scores[m] = sum / weights;
  }
  return scores;
}

std::optional<Prediction> Model::Predict(const Shape& shape) const {
  const std::vector<double> scores = Scores(shape);
  if (scores.empty()) return std::nullopt;
  const size_t m = static_cast<size_t>(std::min_element(scores.begin(), scores.end()) -
                                       scores.begin());
  const Portfolio& p = portfolio_;
  Prediction out;
  out.member = m;
  out.params = p.members[m];
  out.raw_slowdown = std::exp(scores[m]);
  out.expected_slowdown = std::max(1.0, out.raw_slowdown * calibration_);
  // The time: each measuring neighbour's time above the member's latency floor scaled by the
  // work and by how the launch fits, on top of the floor, averaged in log space with the
  // neighbours' weights; the nearest one is reported as measured.
  const std::vector<double> asked = Features(shape);
  const LaunchFit at_asked = fit_ ? fit_(out.params, shape) : LaunchFit{};
  std::vector<std::pair<double, size_t>> near;
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    if (!(p.Time(s, m) > 0)) continue;
    near.push_back({Distance(shape_features_[s], asked), s});
  }
  std::sort(near.begin(), near.end());
  near.resize(std::min(near.size(), std::max<size_t>(options_.neighbours, 1)));
  double sum = 0, weights = 0;
  for (const auto& [distance, s] : near) {
    const double w = 1.0 / (distance + options_.distance_offset);
    const double floor = floor_us_[m];
    const double scaled = (p.Time(s, m) - floor) * (Work(shape) / Work(p.shapes[s])) *
                          std::exp(FitCorrection(fit_at_[s][m], at_asked));
    sum += w * std::log(floor + scaled);
    weights += w;
  }
  if (!near.empty()) {
    out.predicted_time_us = std::exp(sum / weights);
    out.measured_shape = p.shapes[near.front().second];
    out.measured_us = p.Time(near.front().second, m);
  }
  return out;
}

std::vector<Params> Model::Ranked(const Shape& shape) const {
  const std::vector<double> scores = Scores(shape);
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
    model.Precompute();
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
    if (!(picked > 0) || !(nearest_time > 0)) continue;
    out.shapes.push_back(m.shapes[q]);
    out.model_ratio.push_back(m.best_us[q] / picked);
    out.nearest_ratio.push_back(m.best_us[q] / nearest_time);
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
  model.Precompute();
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

}  // namespace cutune::predict
