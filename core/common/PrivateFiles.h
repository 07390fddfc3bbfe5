#pragma once

#include <sys/types.h>

namespace ty {

// Everything Trainyard writes (the database and its -wal/-shm/journal and
// lock files, console copies, runs.env with the API keys a run was given,
// scheduler.json, state folders) holds one user's data: other local users
// must not read it, whatever their umask (issue #20). Called first thing in
// main(): sets the umask to 077, so new files are 0600 and folders 0700,
// and remembers the umask it found. Not thread-safe: call before threads.
void makeNewFilesPrivate();

// The umask the process started with (before makeNewFilesPrivate(); the
// current one if it was never called). Given back to the local agent, which
// gives it to the runs: a run's own outputs keep the user's usual modes.
// Async-signal-safe to read (a child process modifier uses it).
mode_t inheritedUmask();

} // namespace ty
