// The cutune CLI's exit codes (documented in `cutune --help` and docs/cli.md). Scripts rely on
// them: never renumber.
#pragma once

namespace cutune::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        // the request failed (server error, bad table, ...)
inline constexpr int kExitUsage = 2;          // bad command line
inline constexpr int kExitUnavailable = 3;    // server unreachable, or no usable GPU
inline constexpr int kExitNotFound = 4;       // unknown family, device, job, ...
inline constexpr int kExitNoResult = 5;       // a sweep finished without a valid candidate
inline constexpr int kExitDiff = 6;           // `table diff`: the tables differ (like diff(1)'s 1)
inline constexpr int kExitDenied = 7;         // missing token, or a read-only token asked to tune
inline constexpr int kExitInterrupted = 130;  // Ctrl-C during `sweep` (the job was cancelled)

inline constexpr char kExitCodesHelp[] =
    "Exit codes: 0 ok, 1 request failed (also a bad table file), 2 usage error (bad shape,\n"
    "parameter, option), 3 server unreachable or no usable GPU, 4 not found (family, device,\n"
    "job, data), 5 sweep found no valid candidate, 6 tables differ (table diff), 7 not\n"
    "authorized (token), 130 interrupted (sweep cancelled with Ctrl-C).\n"
    "Environment: CUTUNE_SERVER (default daemon address), CUTUNE_TOKEN (bearer token).";

}  // namespace cutune::cli
