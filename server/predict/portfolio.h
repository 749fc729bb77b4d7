// Portfolios: per family and device model, a small set of configurations (the members) that
// covers every tuned shape well, and the matrix of each member's measured time at each tuned
// shape. Built from the store's winners and rows (or imported with a table); the prediction
// model (model.h) learns from the matrix which member to answer an untuned shape with, and the
// "quick" strategy measures the members first. Pure data and functions: no store, no GPU.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "server/core/types.h"

namespace cutune::predict {

inline constexpr size_t kMaxMembers = 32;

// Sum over dimensions of |log2(a / b)|: 1.0 per doubling. Infinity for different ranks or a
// non-positive dimension.
double ShapeDistance(const Shape& a, const Shape& b);

// A tuned shape: its own winner (the best a sweep of that shape found) and its time.
struct TunedShape {
  Shape shape;
  Params winner;
  double winner_us = 0;
  // What ptxas reported for the winner (zeros: not known); the model's cost terms need its
  // occupancy.
  ResourceUsage resources = {};
};

// One measured time of a configuration at a shape (an ok row, or an imported matrix cell).
struct Observation {
  Shape shape;
  Params params;
  double time_us = 0;
  // What ptxas reported for it (a row's; zeros: not known, as for an imported matrix cell).
  ResourceUsage resources = {};
};

struct Portfolio {
  std::vector<Params> members;
  std::vector<Shape> shapes;                 // the tuned shapes, in the order they were given
  std::vector<double> best_us;               // per shape: its own winner's time
  std::vector<std::vector<double>> time_us;  // [shape][member]; 0 where never measured

  bool empty() const { return members.empty(); }
  // The member's time at shape `s`, 0 when not measured.
  double Time(size_t s, size_t member) const { return time_us[s][member]; }
  // The fraction of the matrix's cells that were measured (1.0: complete).
  double Coverage() const;
};

// A score of how well a set of members serves a shape: best_us / the fastest member's time, or
// kUncovered when none of them was measured there. Greedy selection maximizes the sum of logs.
inline constexpr double kUncovered = 0.01;

// Greedy selection counts each shape's best member score and, at these weights, its second and
// third best: a shape served by one member alone (often its own winner) is a region an untuned
// shape nearby finds no answer in once that member is missing, which is what leave-one-shape-out
// measures. Held out, the best member of the portfolio built without the shape: H200 table
// worst 82.0% (the best alone) -> 87.9% (a second cover) -> 95.2% (and a third); H100 (space v9)
// 82.9% -> 86.6% -> 90.6% (bench/results/unseen-shapes.md, section 22).
inline constexpr std::array<double, 3> kCoverWeights = {1.0, 0.5, 0.25};

// Chooses at most `max_members` members among the shapes' winners and near-winners
// (MakeCandidateMatrix), greedily: each step adds the candidate that most raises the sum over
// shapes of log(best_us / fastest member's time) plus the same of the second and third fastest
// member at kCoverWeights, a cover no member fills scoring kUncovered; stops early when no
// candidate raises it.
// Observations of a configuration at a shape are merged by their fastest time; a shape's own
// winner time is never slower than an observation of it. Deterministic for a given input: equal
// gains (within 1e-4 relative) go to the CanonicalBefore-first configuration, and the members
// come out in CanonicalBefore order.
Portfolio BuildPortfolio(const std::vector<TunedShape>& tuned,
                         const std::vector<Observation>& observations,
                         size_t max_members = kMaxMembers);

// A configuration whose time at a tuned shape is within this fraction of the shape's best is a
// near-winner there: a portfolio may hold it in place of winners it serves almost as well.
inline constexpr double kNearWinner = 0.05;

// Every candidate's fastest observed time at every tuned shape, the data portfolios are chosen
// from: shapes in the given order (the first of repeated ones), candidates in canonical order,
// time[shape][candidate] (0: not measured), and each shape's winner. Candidates: the distinct
// winners, and the configurations measured at half the tuned shapes or more (a grid's matrix
// measures near-winners at every shape: scripts/tune-grid.sh --near) that are a near-winner of
// some tuned shape.
struct CandidateMatrix {
  std::vector<Shape> shapes;
  std::vector<double> best_us;
  std::vector<Params> candidates;
  std::vector<std::vector<double>> time;
  std::vector<size_t> winner_of;  // per shape: the candidate that is its winner
};
CandidateMatrix MakeCandidateMatrix(const std::vector<TunedShape>& tuned,
                                    const std::vector<Observation>& observations);
// Whether the candidate's time at the shape is within kNearWinner of the shape's best.
bool IsNearWinner(const CandidateMatrix& m, size_t shape, size_t candidate);
// BuildPortfolio's greedy selection over the shapes with include[s] (candidates: their winners
// and near-winners, so that a shape left out brings no member of its own);
// the portfolio holds only those shapes. `chosen_candidates`, if given, receives the members'
// candidate indices, in member order.
Portfolio SelectPortfolio(const CandidateMatrix& matrix, const std::vector<bool>& include,
                          size_t max_members = kMaxMembers,
                          std::vector<size_t>* chosen_candidates = nullptr);

// Each member's ptxas report, which its cost terms need for its occupancy: that of a tuned shape
// it won (the first in `tuned`), else that of an observation of it (a near-winner a sweep here
// measured; at the least shape, in whatever order they come); zeros where there is neither (a
// member known only from imported matrix cells).
std::vector<ResourceUsage> MemberResources(const std::vector<Params>& members,
                                           const std::vector<TunedShape>& tuned,
                                           const std::vector<Observation>& observations);

// The distinct winners of `tuned`, nearest shape first (ShapeDistance, then CanonicalBefore),
// at most `max`: what a quick sweep's start measures after the portfolios (store/quick_start.h).
std::vector<Params> NearestWinners(const std::vector<TunedShape>& tuned, const Shape& shape,
                                   size_t max = kMaxMembers);

}  // namespace cutune::predict
