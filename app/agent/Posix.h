#pragma once

// Small POSIX helpers shared by the agent and its supervisors. Standard
// library + POSIX only (no Qt). Linux-only calls are guarded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ty::agent {

// Wall clock, milliseconds since the Unix epoch (UTC).
std::int64_t nowMs();
// Monotonic clock in milliseconds (for deadlines and ticks).
std::int64_t monotonicMs();

// Whole file, or nullopt when it cannot be opened/read (errno kept).
std::optional<std::string> readFile(const std::string& path);
// Writes `data` to `path` atomically: `<path>.tmp.<pid>` then rename().
// Returns an empty string on success, else "what: strerror".
std::string writeFileAtomic(const std::string& path, std::string_view data);
// Writes all of `data` to a blocking fd (retries EINTR/short writes).
bool writeAll(int fd, std::string_view data);

bool setNonBlocking(int fd, bool on);
bool setCloseOnExec(int fd);
// Closes every fd >= `lowest` except `keep` (-1 for none).
void closeFrom(int lowest, int keep = -1);

bool fileExists(const std::string& path);
bool isDirectory(const std::string& path);
// Size in bytes, or -1 when it cannot be stat()ed.
std::int64_t fileSize(const std::string& path);
// mkdir -p with `mode` for created components. Empty string on success.
std::string makeDirs(const std::string& path, unsigned mode = 0700);

std::string errnoText(int err);

} // namespace ty::agent
