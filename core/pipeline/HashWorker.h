#pragma once

#include <QObject>
#include <QThread>

#include <functional>
#include <memory>

namespace ty {
class TreeHasher;
}

namespace ty::pipeline {

// The thread memoization hashes on, so a service hashing a 10,000-file
// workdir (seconds with a cold cache) or a model of gigabytes keeps
// answering its clients and its nodes' heartbeats meanwhile. It owns one
// TreeHasher, created and destroyed there (its per-user SQLite cache
// connection belongs to that thread).
//
// run(work, context, done): `work` runs on the hashing thread with the
// hasher, jobs one at a time in the order posted; then `done` runs on
// `context`'s thread, from its event loop (never inside run()). `context`
// must outlive the worker (its owner destroys the worker first: a member
// declared after what its jobs use). Work must not touch objects of other
// threads except through thread-safe calls (ResultStore reads).
//
// Destruction waits for the job under way; jobs not started are dropped.
class HashWorker final {
public:
    HashWorker();
    ~HashWorker();
    HashWorker(const HashWorker&) = delete;
    HashWorker& operator=(const HashWorker&) = delete;

    void run(std::function<void(TreeHasher&)> work, QObject* context, std::function<void()> done);

private:
    QThread m_thread;
    QObject* m_inThread;                  // lives on m_thread: the target of the posted jobs
    std::unique_ptr<TreeHasher> m_hasher; // touched on m_thread only
};

} // namespace ty::pipeline
