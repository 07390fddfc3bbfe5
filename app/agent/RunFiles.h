#pragma once

// Files a run writes into its workdir or run directory, for the `read_file`
// request (PROTOCOL.md): metric files (metric_files globs,
// $TRAINYARD_METRICS_FILE) followed while the run is live.
//
// Confinement: every path is relative to a root (the run's workdir or its run
// directory). Paths that are absolute or have a `..` component are refused,
// and so is a path whose real path (symlinks resolved) lies outside the
// root's real path.
//
// Standard library + POSIX only (the agent links no Qt).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ty::agent {

struct RunFile {
    std::string path;         // relative to the root, '/'-separated
    std::int64_t size = 0;    // bytes
    std::int64_t mtimeMs = 0; // ms since the Unix epoch
};

// Empty when the relative path `rel` may be used, else why not (names it).
std::string checkRelativePattern(const std::string& rel);

// Opens `root`/`rel` for reading, confined to `root`. Returns the fd (>= 0)
// with `info` filled, or -1 with `error` set (names the path).
int openConfined(const std::string& root, const std::string& rel, RunFile& info, std::string& error);

// RFC 4648 base64 with padding (the `data` of a read_file reply).
std::string base64Encode(const char* data, std::size_t size);

} // namespace ty::agent
