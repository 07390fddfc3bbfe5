#pragma once

#include <string>

namespace ty::service {

// Detaches the calling process the classic way (APUE 13.3): fork, setsid,
// fork again, umask kept, cwd "/", stdin from /dev/null, stdout and stderr
// appended to `logPath` (created 0600). Call before any thread exists (before
// QCoreApplication).
//
// The original process does not return: it waits on a pipe for the detached
// one's word (reportReady / reportFailure below) and exits with its status,
// printing a failure's message on stderr: 0 ready, 3 another service holds
// the lock, 1 anything else (also when the service died before reporting).
// In the detached process it returns the pipe's write end (>= 0), or -1 with
// `*error` set when detaching failed (then nothing was forked).
int detach(const std::string& logPath, std::string* error);

// Tells the waiting original process how starting went, and closes the pipe.
// `fd` < 0 (not detached): does nothing.
void reportReady(int fd);
void reportFailure(int fd, int status, const std::string& message);

// Moves `logPath` to .1 (.1 to .2, .2 to .3; .3 is dropped) when it is over
// `maxBytes`, and points stdout/stderr at a fresh file. Returns whether it rotated.
bool rotateLog(const std::string& logPath, long long maxBytes);

} // namespace ty::service
