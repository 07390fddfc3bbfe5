// The agent's `read_file` request (PROTOCOL.md): bytes of a file a run
// writes into its workdir or run directory (metric files), from an offset,
// confined to those directories (RunFiles.h). Listing them is `list_files`
// (ListFiles.cpp).
#include "Agent.h"

#include "Posix.h"
#include "RunFiles.h"

#include "core/agentproto/Fields.h"

#include <algorithm>
#include <cerrno>

#include <unistd.h>

namespace ty::agent {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;
namespace ops = agentproto::ops;

namespace {

constexpr std::int64_t kMaxReadBytes = 256 * 1024; // base64: 342 KiB on one line, far below 1 MiB

std::string field(const Json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace

std::string Agent::runFileRoot(const std::string& run, const std::string& root, std::string& error) const
{
    if (root == agentproto::kRootRunDir)
        return m_registry.paths(run).dir;
    if (root == agentproto::kRootWorkdir || root.empty()) {
        auto rj = m_registry.runJson(run);
        const std::string wd = rj ? rj->value("workdir", std::string()) : std::string();
        if (wd.empty())
            error = "run " + run + ": no workdir recorded in run.json";
        return wd;
    }
    error = "run " + run + ": unknown root \"" + root + "\" (expected \"workdir\" or \"run_dir\")";
    return {};
}

void Agent::opReadFile(const Json& id, const Json& req)
{
    const std::string run = field(req, fields::kRun);
    if (!RunRegistry::validRunId(run) || !m_registry.exists(run)) {
        replyError(id, "read_file: no run \"" + run + "\" on this node");
        return;
    }
    std::string error;
    const std::string dir = runFileRoot(run, field(req, fields::kRoot), error);
    if (!error.empty()) {
        replyError(id, error);
        return;
    }
    std::int64_t offset = 0;
    if (auto it = req.find(fields::kOffset); it != req.end() && !it->is_null()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
            replyError(id, "run " + run + ": read_file offset must be an integer >= 0");
            return;
        }
        offset = it->get<std::int64_t>();
    }
    std::int64_t max = kMaxReadBytes;
    if (auto it = req.find(fields::kMax); it != req.end() && it->is_number_integer())
        max = std::clamp<std::int64_t>(it->get<std::int64_t>(), 0, kMaxReadBytes);
    const std::string path = field(req, fields::kPath);
    RunFile info;
    const int fd = openConfined(dir, path, info, error);
    if (fd < 0) {
        replyError(id, "run " + run + ": read_file: " + error);
        return;
    }
    std::string buf;
    if (offset < info.size) {
        buf.resize(std::size_t(std::min(max, info.size - offset)));
        std::size_t got = 0;
        while (got < buf.size()) {
            const ssize_t r = ::pread(fd, buf.data() + got, buf.size() - got, off_t(offset + std::int64_t(got)));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += std::size_t(r);
        }
        buf.resize(got);
    }
    ::close(fd);
    // `size` lets the client notice a file that shrank (rewritten): offset > size.
    reply(id,
            Json{{fields::kPath, info.path}, {fields::kSize, info.size}, {fields::kMtimeMs, info.mtimeMs},
                    {fields::kOffset, offset},
                    {fields::kBytes, std::int64_t(buf.size())}, // not "len": that would announce a raw payload
                    {fields::kData, base64Encode(buf.data(), buf.size())}});
}

} // namespace ty::agent
