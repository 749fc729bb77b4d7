// The PREDICTED rung's model: which portfolio member to answer an untuned shape with, and how
// much slower than a tuning of that shape it is expected to be. Nearest neighbours over the
// tuned shapes (log2 of each dimension, plus a penalty for a dimension that is not a multiple of
// 4, where vector loads fall back). A member's predicted slowdown is the distance-weighted mean
// of its measured slowdowns at the neighbours, each corrected by how its tiles and waves fit the
// asked shape against the neighbour (the fit hook), relative to how the median member's fit
// changes between the two shapes (what changes for every member alike does not change the ranking, and small grids
// are latency-bound rather than proportional to busy SMs). The member with the least predicted
// slowdown wins; leave-one-shape-out over the tuned shapes calibrates the slowdown it reports.
// Chosen on the H200 grid (bench/results/unseen-shapes.md).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "server/core/types.h"
#include "server/predict/portfolio.h"

namespace cutune::predict {

// How a configuration's launch fits a shape. The family supplies it (kernels::LaunchEfficiency).
struct LaunchFit {
  // In (0, 1]: the share of its tiles' area that covers the output times the share of the last
  // wave's SMs kept busy.
  double efficiency = 1;
};
// nullptr: efficiency 1 everywhere.
using FitFn = std::function<LaunchFit(const Params& params, const Shape& shape)>;

struct ModelOptions {
  size_t neighbours = 6;           // tuned shapes consulted per prediction
  double distance_offset = 0.25;   // weight = 1 / (distance + offset)
  double unaligned_penalty = 2.0;  // distance added per dimension whose alignment (% 4) differs
  double unmeasured_slowdown = 4;  // assumed for a member never measured at a neighbour
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
// winner, and the predicted and actual slowdowns.
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
  double calibration() const { return calibration_; }
  const Evaluation& evaluation() const { return evaluation_; }

  // The leave-one-shape-out evaluation on its own (Train runs it): each tuned shape in turn is
  // held out, a portfolio and model are built from the rest, and the pick is timed with the
  // held-out shape's observations. Shapes whose pick was never measured there are left out.
  static Evaluation LeaveOneShapeOut(const std::vector<TunedShape>& tuned,
                                     const std::vector<Observation>& observations,
                                     const FitFn& fit, const ModelOptions& options);

 private:
  // Predicted log slowdown of every member at `shape` (empty when it cannot predict).
  std::vector<double> Scores(const Shape& shape) const;
  std::vector<double> Features(const Shape& shape) const;
  // Each member's fit at `shape`.
  std::vector<LaunchFit> FitsAt(const Shape& shape) const;

  // Precomputed at training: each tuned shape's features, and each member's fit there.
  void Precompute();
  // A member's launch latency: its time at no work, from its two measured shapes of least work.
  // Predicted times scale only what lies above it.
  double LatencyFloor(size_t member) const;

  Portfolio portfolio_;
  std::vector<std::vector<double>> shape_features_;
  std::vector<std::vector<LaunchFit>> fit_at_;  // [shape][member]
  // Per member, the launch's latency (LatencyFloor).
  std::vector<double> floor_us_;
  FitFn fit_;
  ModelOptions options_;
  double calibration_ = 1;
  Evaluation evaluation_;
};

}  // namespace cutune::predict
