// The PREDICTED rung's model: which portfolio member to answer an untuned shape with, and how
// much slower than a tuning of that shape it is expected to be. Two estimates, both from the
// tuned shapes nearest the asked one (log2 of each dimension, plus a penalty for a dimension that
// is not a multiple of 4, where vector loads fall back):
// - the neighbours' slowdowns: a member's predicted slowdown is the distance-weighted mean of
//   its measured slowdowns at the neighbours, each corrected by how its tiles and waves fit the
//   asked shape against the neighbour (the fit's efficiency), relative to how the median
//   member's fit changes between the two shapes (what changes for every member alike does not
//   change the ranking);
// - where the family has a cost model (the fit's cost terms), each member's time: a
//   non-negative sum of its terms plus a latency, fitted to its measured times over the grid,
//   no less than its launch latency, times part of its fit's weighted error at the neighbours.
// The member of least predicted time wins where the cost model applies (the asked shape is no
// smaller in work than the least tuned one: below the grid it would extrapolate), otherwise the
// one of least slowdown. The reported slowdown is the neighbours' estimate for the pick,
// calibrated by leave-one-shape-out over the tuned shapes. Chosen on the H200 grid
// (bench/results/unseen-shapes.md).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/core/types.h"
#include "server/predict/portfolio.h"

namespace cutune::predict {

// How a configuration's launch fits a shape. The family supplies it (kernels::LaunchEfficiency).
struct LaunchFit {
  // In (0, 1]: the share of its tiles' area that covers the output times the share of the last
  // wave's SMs kept busy.
  double efficiency = 1;
  // The quantities its time grows with (kernels::KernelFamily::CostTerms); empty: none.
  std::vector<double> cost_terms;
};
// `resources`: the configuration's ptxas report (zeros when not known). nullptr: efficiency 1
// everywhere and no cost terms.
using FitFn = std::function<LaunchFit(const Params& params, const Shape& shape,
                                      const ResourceUsage& resources)>;

// Non-negative weighted least squares: c >= 0 minimizing sum_i w_i (x_i . c - y_i)^2, by the
// active-set rule (solve, drop the most negative coefficient, solve again). Rows of `x` share
// one length; columns are scaled to unit size before solving. Zeros when there are no rows.
std::vector<double> FitNonNegative(const std::vector<std::vector<double>>& x,
                                   const std::vector<double>& y, const std::vector<double>& w);

struct ModelOptions {
  size_t neighbours = 6;           // tuned shapes consulted per prediction
  double distance_offset = 0.25;   // weight = 1 / (distance + offset)
  double unaligned_penalty = 2.0;  // distance added per dimension whose alignment (% 4) differs
  double unmeasured_slowdown = 4;  // assumed for a member never measured at a neighbour
  // The share of a member's mean log error at the neighbours that corrects its cost model's
  // time (1: the whole error; 0: the cost model alone).
  double residual_weight = 0.5;
  // The same share where the member measured slower at the neighbours than its cost model says:
  // a fit that flatters a member near the asked shape is corrected further (held out on the
  // H200 grid: p10 89.5% -> 91.9%, worst 80.6% -> 82.0%; bench/results/unseen-shapes.md).
  double underestimate_weight = 0.75;
};

struct Prediction {
  size_t member = 0;
  Params params;
  double raw_slowdown = 1;        // the neighbours' weighted estimate, before calibration
  double expected_slowdown = 1;   // calibrated, >= 1
  double predicted_time_us = 0;   // at the asked shape
  Shape measured_shape;           // the nearest tuned shape where the member was measured
  double measured_us = 0;         // its time there
};

// Leave-one-shape-out over tuned shapes, per shape: its own winner's time over the time of the
// member the model picks without it (1.0: as good), the same for the nearest tuned shape's
// winner (0 where that winner was never measured at the shape: the matrix measures members,
// not every winner), and the predicted and actual slowdowns.
struct Evaluation {
  std::vector<Shape> shapes;
  std::vector<double> model_ratio;
  std::vector<double> nearest_ratio;
  // The held-out shape's winner over the fastest member of the portfolio built without it: the
  // best any model choosing among those members could do.
  std::vector<double> oracle_ratio;
  std::vector<double> predicted_slowdown;
  std::vector<double> actual_slowdown;
  // The predicted time of the picked member over its measured time at the held-out shape.
  std::vector<double> time_ratio;
};

// Another rule's answers judged on one device's measurements: per tuned shape of the device
// where the rule answers a configuration the device measured there, the shape's own winner time
// over the configuration's time (the ratio Evaluation::model_ratio holds for the device's own
// model, held out). The measured time of a configuration is its fastest observation at the shape.
struct Judgement {
  std::vector<Shape> shapes;
  std::vector<double> ratio;
  std::vector<Params> params;    // the configuration answered at each shape
  std::vector<double> time_us;   // its measured time there
};
using AnswerFn = std::function<std::optional<Params>(const Shape& shape)>;
Judgement JudgeAnswers(const std::vector<TunedShape>& tuned,
                       const std::vector<Observation>& observations, const AnswerFn& answer);

// Two rules on the shapes both were judged at: how many, and the geometric mean of each's
// ratios there (0 at none).
struct Comparison {
  size_t shapes = 0;
  double own = 0;
  double other = 0;
  // Whether the other rule serves the device better than its own model: judged at no fewer
  // shapes than a model needs to predict at all (Model::kMinPredictedShapes), and better on
  // them by more than kMargin. Within it the own model keeps answering: two tunings of one
  // shape differ by up to 0.6% (ties), and each held-out ratio carries that noise.
  static constexpr double kMargin = 1.02;
  bool OtherIsBetter() const;
};
Comparison CompareOnOwnShapes(const Evaluation& own, const Judgement& other);

class Model {
 public:
  Model() = default;
  // Builds the portfolio (BuildPortfolio) and calibrates on leave-one-shape-out: the reported
  // slowdown is the raw one times the median of actual over raw on the tuned shapes (at least 1).
  static Model Train(const std::vector<TunedShape>& tuned,
                     const std::vector<Observation>& observations, FitFn fit,
                     ModelOptions options = {});

  // Nothing when the portfolio is empty or the rank differs from the tuned shapes'.
  std::optional<Prediction> Predict(const Shape& shape) const;
  // The members, least predicted slowdown first (the quick strategy measures them in this order).
  std::vector<Params> Ranked(const Shape& shape) const;

  // Whether the model has a matrix to predict from: at least kMinPredictedShapes tuned shapes
  // and at least kMinMatrixCoverage of the cells measured (winners alone are the nearest-shape
  // rule in disguise). The PREDICTED rung and table export ask this.
  static constexpr size_t kMinPredictedShapes = 4;
  static constexpr double kMinMatrixCoverage = 0.75;
  bool HasMatrix() const {
    return portfolio_.shapes.size() >= kMinPredictedShapes &&
           portfolio_.Coverage() >= kMinMatrixCoverage;
  }

  const Portfolio& portfolio() const { return portfolio_; }
  // Each member's ptxas report, in member order (MemberResources; zeros: not known).
  const std::vector<ResourceUsage>& member_resources() const { return member_resources_; }
  double calibration() const { return calibration_; }
  const Evaluation& evaluation() const { return evaluation_; }
  // The kernel source whose timings it learned from (the store's choice: TrainingSource; empty:
  // not said), which a table exporting its portfolio names.
  const std::string& source_hash() const { return source_hash_; }
  void set_source_hash(std::string source_hash) { source_hash_ = std::move(source_hash); }

  // The leave-one-shape-out evaluation on its own (Train runs it): each tuned shape in turn is
  // held out, a portfolio and model are built from the rest, and the pick is timed with the
  // held-out shape's observations. Shapes whose pick was never measured there are left out.
  static Evaluation LeaveOneShapeOut(const std::vector<TunedShape>& tuned,
                                     const std::vector<Observation>& observations,
                                     const FitFn& fit, const ModelOptions& options);

 private:
  // A shape being answered, with what every estimate of it needs: each member's fit there and
  // the nearest tuned shapes (nearest first, with their distances). Only for Predictable shapes.
  struct Asked {
    Shape shape;
    std::vector<LaunchFit> fits;
    std::vector<std::pair<double, size_t>> near;
  };
  Asked Ask(const Shape& shape) const;
  // Predicted log slowdown of every member from the neighbours' slowdowns. Clipped, each
  // neighbour's estimate is at least 0 (no member is faster than a shape's winner): what the
  // expected slowdown reports. Unclipped it still orders members that all clip to 0. A
  // neighbour where a member was not measured counts as options.unmeasured_slowdown when
  // members are ranked (an unknown is not a good bet); `measured_only` leaves it out, as the
  // expected slowdown of a pick does (a matrix with unmeasured cells reported 2.4x for a pick
  // measured at 2 of its 6 neighbours, 1.0x and 1.07x there). Without any: unmeasured_slowdown.
  std::vector<double> Scores(const Asked& asked, bool clipped = true,
                             bool measured_only = false) const;
  // Predicted log time of every member from its cost model (empty where the cost model does not
  // apply).
  std::vector<double> CostScores(const Asked& asked) const;
  // What the pick is chosen by, least first: CostScores where they apply, else Scores with
  // ties (members whose every estimate clipped to 0) ordered by the unclipped Scores.
  std::vector<std::pair<double, double>> Ranking(const Asked& asked) const;
  // The tuned shapes nearest `shape`, nearest first, with their distances.
  std::vector<std::pair<double, size_t>> Neighbours(const Shape& shape) const;
  std::vector<double> Features(const Shape& shape) const;
  // Each member's fit at `shape`.
  std::vector<LaunchFit> FitsAt(const Shape& shape) const;
  // A member's cost model's time at a fit (0 without one).
  double CostTime(size_t member, const LaunchFit& fit) const;
  // The same, no less than the member's launch latency (LatencyFloor): what the pick and the
  // predicted time use. A fit whose terms go to nothing (a split-K tile at K = 16) would
  // otherwise call a member faster than any launch of it (H100 grid: 3.2 us for a member
  // measured at 10.4 us; bench/results/unseen-shapes.md section 21). The error at the
  // neighbours (CostError) stays the fit's own.
  double FlooredCostTime(size_t member, const LaunchFit& fit) const;
  // The weighted mean of log(measured / cost model's time) of a member at the given neighbours
  // (where it was measured; 0 at none).
  double CostError(size_t member, const std::vector<std::pair<double, size_t>>& near) const;
  // Whether the cost model may answer `shape`: no less work than the least tuned shape's.
  bool CostApplies(const Shape& shape) const;

  // Precomputed at training: each tuned shape's features, each member's fit there and its cost
  // model. `tuned` and `observations` give each member's ptxas report (MemberResources).
  void Precompute(const std::vector<TunedShape>& tuned,
                  const std::vector<Observation>& observations);
  // A member's launch latency: its time at no work, from its two measured shapes of least work.
  // Predicted times scale only what lies above it.
  double LatencyFloor(size_t member) const;

  Portfolio portfolio_;
  std::vector<std::vector<double>> shape_features_;
  std::vector<std::vector<LaunchFit>> fit_at_;  // [shape][member]
  // Per member, the launch's latency (LatencyFloor).
  std::vector<double> floor_us_;
  // Per member: its ptxas report (MemberResources), and its cost model's coefficients (a latency, then
  // one per cost term; empty without one).
  std::vector<ResourceUsage> member_resources_;
  std::vector<std::vector<double>> cost_;
  // The least work (product of dimensions) of a tuned shape: the cost model applies from it on.
  double least_work_ = 0;
  FitFn fit_;
  ModelOptions options_;
  double calibration_ = 1;
  Evaluation evaluation_;
  std::string source_hash_;
};

}  // namespace cutune::predict
