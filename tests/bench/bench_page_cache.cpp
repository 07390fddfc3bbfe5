// What a console file costs the page cache: writes 1 GiB (or --mb N) to a new
// file in pieces of --piece KiB, plain or through WriteBehind (core/common),
// and prints wall and CPU time beside each other. On a VM with free page
// reporting a page the guest has not used lately costs a host fault on first
// touch, so run each mode after the machine has been idle a few seconds
// (--idle S sleeps first). tests/bench/RESULTS.md keeps the figures.
//
//   bench_page_cache [--dir DIR (/tmp)] [--mb N (1024)] [--piece KiB (256)]
//                    [--mode plain|flush|flush+drop] [--idle S (0)]
#include "core/common/WriteBehind.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

namespace {

double monotonicSeconds()
{
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

double cpuSeconds(const timeval& tv)
{
    return double(tv.tv_sec) + double(tv.tv_usec) * 1e-6;
}

} // namespace

int main(int argc, char** argv)
{
    // The version this benchmark measures by: bumped whenever what it measures
    // changes (tests/bench/RESULTS.md marks each figure with it).
    std::printf("bench_page_cache v1\n");
    std::fflush(stdout);
    std::string dir = "/tmp";
    std::string mode = "plain";
    long long mb = 1024;
    long long pieceKiB = 256;
    int idle = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--dir")
            dir = argv[i + 1];
        else if (a == "--mb")
            mb = std::atoll(argv[i + 1]);
        else if (a == "--piece")
            pieceKiB = std::atoll(argv[i + 1]);
        else if (a == "--mode")
            mode = argv[i + 1];
        else if (a == "--idle")
            idle = std::atoi(argv[i + 1]);
        else {
            std::fprintf(stderr,
                    "usage: bench_page_cache [--dir DIR] [--mb N] [--piece KiB] [--mode plain|flush|flush+drop] [--idle S]\n");
            return 2;
        }
    }
    unsigned modes = 0;
    if (mode == "flush")
        modes = ty::WriteBehind::Flush;
    else if (mode == "flush+drop")
        modes = ty::WriteBehind::Flush | ty::WriteBehind::Drop;
    else if (mode != "plain") {
        std::fprintf(stderr, "bench_page_cache: unknown --mode %s\n", mode.c_str());
        return 2;
    }
    const std::string path = dir + "/bench_page_cache.out";
    ::unlink(path.c_str());
    if (idle > 0)
        ::sleep(unsigned(idle));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        std::perror(path.c_str());
        return 1;
    }
    std::vector<char> piece(size_t(pieceKiB) * 1024, 'x');
    ty::WriteBehind trail(modes);
    trail.reset(0);
    const long long total = mb * 1024 * 1024;
    rusage r0{};
    getrusage(RUSAGE_SELF, &r0);
    const double t0 = monotonicSeconds();
    long long off = 0;
    while (off < total) {
        const ssize_t n = ::write(fd, piece.data(), piece.size());
        if (n <= 0) {
            std::perror("write");
            return 1;
        }
        off += n;
        if (modes != 0)
            trail.advance(fd, off);
    }
    const double t1 = monotonicSeconds();
    rusage r1{};
    getrusage(RUSAGE_SELF, &r1);
    ::close(fd);
    ::unlink(path.c_str());
    std::printf("%s, %lld MiB in %lld KiB writes: %.2f s wall, %.2f s sys, %.2f s user, %.0f MB/s\n", mode.c_str(), mb,
            pieceKiB, t1 - t0, cpuSeconds(r1.ru_stime) - cpuSeconds(r0.ru_stime),
            cpuSeconds(r1.ru_utime) - cpuSeconds(r0.ru_utime), double(total) / 1e6 / (t1 - t0));
    return 0;
}
