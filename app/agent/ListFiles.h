#pragma once

// `list_files` (PROTOCOL.md): the files under a run's workdir and run
// directory whose relative paths match one of the given globs. The walk enters
// only directories some glob can reach (dirMayHoldMatches), never
// follows symlinks (a link is reported as "symlink" with its target) and stops
// after kMaxListEntries visited entries ("truncated": true).
// Globs: '/'-separated; `*`, `?` and `[...]` within one name (fnmatch(3)),
// `**` as a whole component for zero or more directories. A glob that is
// absolute or has a `..` component is refused.
// The agent's own files in the run directory (`agentFiles`: absolute paths of
// console.log, console.stderr, run.json, exit.json, cancel.json, RunPaths) and
// their "<path>.tmp.<pid>" temporaries (Posix.cpp writeFileAtomic) are never
// listed: they are the agent's bookkeeping, not what the run produced.

#include "Framing.h"

#include <string>
#include <vector>

namespace ty::agent {

inline constexpr std::size_t kMaxListEntries = 100000;

// Whether a file below the relative directory `dir` could match one of
// `globs` (the walk enters only such directories, so a large data folder no
// glob reaches costs nothing; the engine lists every run's files every few
// seconds for its metric files).
bool dirMayHoldMatches(const std::vector<std::string>& globs, const std::string& dir);
// Whether `path` (relative) matches `glob` (see above).
bool globMatch(const std::string& glob, const std::string& path);
// Empty when the glob is acceptable, else why not.
std::string checkGlob(const std::string& glob);
// {"workdir","run_dir","files":[...],"truncated"} for the reply.
Json listRunFiles(const std::string& workdir, const std::string& runDir, const std::vector<std::string>& globs,
        const std::vector<std::string>& agentFiles = {});

} // namespace ty::agent
