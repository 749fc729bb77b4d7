// The pictures of one sweep a GPU engineer looks for, each a self-contained SVG with the sweep's
// provenance in its footer: every candidate's % of reference, sorted (where the winner sits, how
// many are within 1% / 5% of it); time against each parameter (one strip plot per parameter);
// best-so-far against evaluations; the outcome counts; registers and shared memory against time;
// and the winner against the measured reference ceiling (roofline-style). `cutune report` and
// the daemon's dashboard both draw them from here. The pure summaries the pictures are drawn from
// are public so that tests can check the numbers, not only the drawing.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cutune/v1/cutune.pb.h"

namespace cutune::charts {

namespace pb = ::cutune::v1;

// Where the numbers come from, printed under every picture.
struct Provenance {
  std::string device_model;   // "NVIDIA H200"
  std::string source_hash;    // the family's .cu SHA-256 (shown shortened)
  int driver_version = 0;     // 13000
  std::string nvrtc_version;  // "13.0"
  int64_t date_ms = 0;        // the sweep's start (Unix ms); 0: unknown
  int64_t sweep_id = 0;       // 0: unknown
  std::string timing;         // "held", "idle" (how samples start); empty: not recorded
};
// "NVIDIA H200 · sweep 12 · source 3f2a…9c01 · driver 13.0 · NVRTC 13.0 · held start ·
// 2026-12-01 17:55 UTC"
std::string ProvenanceLine(const Provenance& p);
Provenance ProvenanceOf(const pb::SweepSummary& sweep, const std::string& device_model);

struct SweepData {
  std::string problem;  // "transpose 8192x8192 f32"
  Provenance provenance;
  std::string reference_name;  // "device copy", "cuBLAS SGEMM"
  double reference_us = 0;     // 0: no reference measured
  std::vector<pb::Measurement> rows;
};
SweepData FromResults(std::string problem, const pb::ListResultsResponse& results);

// The fastest ok row (nullptr: none).
const pb::Measurement* Winner(const std::vector<pb::Measurement>& rows);

// (a) Sorted percentages: of the reference where measured, else of the winner's speed.
struct Ranking {
  std::vector<double> percent;  // every ok candidate, best first
  bool of_reference = false;    // false: % of the winner's speed (no reference measured)
  int within_1 = 0;             // candidates (the winner included) within 1% of the winner
  int within_5 = 0;
};
Ranking RankCandidates(const std::vector<pb::Measurement>& rows);

// (c) The best time found after each evaluation, in measuring order (Measurement.sequence,
// then the order given); rejected candidates count as evaluations that found nothing (NaN until
// the first ok one).
std::vector<double> BestSoFar(const std::vector<pb::Measurement>& rows);

// (d) Every outcome of the closed set, in a fixed order, with its count (zeros included).
struct OutcomeCount {
  pb::Outcome outcome;
  std::string label;   // "ok", "pruned", "compile failed", ...
  std::string colour;  // each outcome its own
  int64_t count = 0;
};
std::vector<OutcomeCount> CountOutcomes(const std::vector<pb::Measurement>& rows);

// (b) One strip per parameter: its values, each with the times of the ok candidates that have
// it; parameters sorted by name.
struct Strip {
  std::string parameter;
  std::vector<int64_t> values;
  std::vector<std::vector<double>> times;  // per value
  int64_t winner_value = 0;
};
std::vector<Strip> Strips(const std::vector<pb::Measurement>& rows);

// (f) The winner against the measured ceiling: throughput in the family's unit.
struct Roofline {
  bool available = false;  // a winner with a % of reference and a throughput
  std::string unit;        // "GB/s" or "TFLOP/s"
  double winner = 0;
  double ceiling = 0;      // winner / (percent / 100): the reference's throughput
  double percent = 0;
};
Roofline RooflineOf(const SweepData& data);

std::string PercentChart(const SweepData& data);
std::string ParameterChart(const SweepData& data);
std::string BestSoFarChart(const SweepData& data);
std::string OutcomeChart(const SweepData& data);
std::string ResourceChart(const SweepData& data);
std::string RooflineChart(const SweepData& data);

// All six, in that order, with an id per picture (for pages and tests).
std::vector<std::pair<std::string, std::string>> SweepCharts(const SweepData& data);

}  // namespace cutune::charts
