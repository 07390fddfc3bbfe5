#include "ListFiles.h"

#include "core/agentproto/Fields.h"

#include <cerrno>
#include <cstring>

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ty::agent {

namespace fields = agentproto::fields;
namespace messages = agentproto::messages;
namespace ops = agentproto::ops;

namespace {

// Well-formed UTF-8 as the Unicode Standard's Table 3-7 defines it (no
// overlong forms, no surrogates, nothing above U+10FFFF). A name that is not
// reaches the client with U+FFFD in it (JSON carries text), so it is marked.
bool isUtf8(const std::string& s)
{
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const auto* const end = p + s.size();
    while (p < end) {
        const unsigned c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        int more = 0;
        unsigned lo = 0x80, hi = 0xBF; // the range of the second byte
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else {
            return false;
        }
        if (end - p <= more || p[1] < lo || p[1] > hi)
            return false;
        for (int k = 2; k <= more; ++k)
            if ((p[k] & 0xC0) != 0x80)
                return false;
        p += more + 1;
    }
    return true;
}

std::vector<std::string> split(const std::string& s)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = s.find('/', start);
        out.push_back(s.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    return out;
}

bool matchParts(const std::vector<std::string>& g, std::size_t gi, const std::vector<std::string>& p, std::size_t pi)
{
    while (gi < g.size()) {
        if (g[gi] == "**") {
            for (std::size_t k = pi; k <= p.size(); ++k)
                if (matchParts(g, gi + 1, p, k))
                    return true;
            return false;
        }
        if (pi >= p.size() || ::fnmatch(g[gi].c_str(), p[pi].c_str(), FNM_PERIOD) != 0)
            return false;
        ++gi;
        ++pi;
    }
    return pi == p.size();
}

// Whether some path below the directory `d` (its components) can match the
// glob `g` from component gi on: the directory is a prefix of the path.
bool prefixCanMatch(
        const std::vector<std::string>& g, std::size_t gi, const std::vector<std::string>& d, std::size_t di)
{
    if (di == d.size())
        return gi < g.size(); // something left to match below the directory
    if (gi == g.size())
        return false;
    if (g[gi] == "**")
        return prefixCanMatch(g, gi + 1, d, di) || prefixCanMatch(g, gi, d, di + 1);
    return ::fnmatch(g[gi].c_str(), d[di].c_str(), FNM_PERIOD) == 0 && prefixCanMatch(g, gi + 1, d, di + 1);
}

struct Lister {
    const std::vector<std::string>& globs;
    Json files = Json::array();
    std::size_t visited = 0;
    bool truncated = false;
    std::string skipDir; // the other root, when nested (listed once)
    const std::vector<std::string>& agentFiles;

    bool isAgentFile(const std::string& abs) const
    {
        for (const auto& f : agentFiles)
            if (abs == f || (abs.size() > f.size() + 5 && abs.compare(0, f.size() + 5, f + ".tmp.") == 0))
                return true;
        return false;
    }

    bool matches(const std::string& rel) const
    {
        for (const auto& g : globs)
            if (globMatch(g, rel))
                return true;
        return false;
    }

    void walk(const std::string& rootName, const std::string& abs, const std::string& rel)
    {
        DIR* d = ::opendir(abs.c_str());
        if (!d)
            return;
        while (dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name == "." || name == "..")
                continue;
            if (++visited > kMaxListEntries) {
                truncated = true;
                break;
            }
            const std::string childAbs = abs + "/" + name;
            const std::string childRel = rel.empty() ? name : rel + "/" + name;
            struct stat st { };
            if (::lstat(childAbs.c_str(), &st) != 0)
                continue;
            if (rootName == agentproto::kRootWorkdir && name == ".trainyard-sync.json" && rel.empty())
                continue;
            if (isAgentFile(childAbs))
                continue;
            if (S_ISDIR(st.st_mode)) {
                // Only into directories some glob can reach: a data set or a
                // checkpoint folder beside `out/*` is never walked.
                if (childAbs != skipDir && dirMayHoldMatches(globs, childRel))
                    walk(rootName, childAbs, childRel);
                continue;
            }
            if (!matches(childRel))
                continue;
            Json f{{fields::kRoot, rootName}, {fields::kPath, childRel}, {fields::kSize, std::int64_t(st.st_size)},
                    {fields::kMtimeMs, std::int64_t(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000}};
            if (S_ISREG(st.st_mode)) {
                f[fields::kType] = "file";
            } else if (S_ISLNK(st.st_mode)) {
                f[fields::kType] = "symlink";
                char buf[4096];
                const ssize_t n = ::readlink(childAbs.c_str(), buf, sizeof buf - 1);
                f[fields::kTarget] = n >= 0 ? std::string(buf, std::size_t(n)) : std::string();
            } else {
                f[fields::kType] = "other";
            }
            if (!isUtf8(childRel))
                f[fields::kNameNotUtf8] = true;
            files.push_back(std::move(f));
        }
        ::closedir(d);
    }
};

} // namespace

bool dirMayHoldMatches(const std::vector<std::string>& globs, const std::string& dir)
{
    const std::vector<std::string> d = split(dir);
    for (const auto& g : globs)
        if (prefixCanMatch(split(g), 0, d, 0))
            return true;
    return false;
}

bool globMatch(const std::string& glob, const std::string& path)
{
    return matchParts(split(glob), 0, split(path), 0);
}

std::string checkGlob(const std::string& glob)
{
    if (glob.empty())
        return "an empty glob";
    if (glob.front() == '/')
        return "glob \"" + glob + "\" is absolute: globs are relative to the run's workdir";
    for (const auto& part : split(glob))
        if (part == "..")
            return "glob \"" + glob + "\" has a \"..\" component: artifacts come from inside the run's directories";
    return {};
}

Json listRunFiles(const std::string& workdir, const std::string& runDir, const std::vector<std::string>& globs,
        const std::vector<std::string>& agentFiles)
{
    Lister l{globs, Json::array(), 0, false, {}, agentFiles};
    if (!workdir.empty()) {
        l.skipDir = runDir;
        l.walk(agentproto::kRootWorkdir, workdir, "");
    }
    if (!runDir.empty() && runDir != workdir) {
        l.skipDir.clear();
        l.walk(agentproto::kRootRunDir, runDir, "");
    }
    return Json{{fields::kWorkdir, workdir}, {fields::kRunDir, runDir}, {fields::kFiles, std::move(l.files)},
            {fields::kTruncated, l.truncated}};
}

} // namespace ty::agent

// ---- the request (a member of Agent, kept here beside the walk) --------------

#include "Agent.h"

namespace ty::agent {

void Agent::opListFiles(const Json& id, const Json& req)
{
    const std::string run = req.value(fields::kRun, std::string());
    const auto rj = m_registry.runJson(run);
    if (!rj) {
        replyError(id, "list_files: no run \"" + run + "\" on this node");
        return;
    }
    std::vector<std::string> globs;
    if (auto it = req.find(fields::kGlobs); it != req.end() && it->is_array()) {
        for (const auto& g : *it) {
            if (!g.is_string()) {
                replyError(id, "run " + run + ": \"globs\" must be an array of strings");
                return;
            }
            globs.push_back(g.get<std::string>());
        }
    }
    for (const auto& g : globs) {
        if (const std::string why = checkGlob(g); !why.empty()) {
            replyError(id, "run " + run + ": " + why);
            return;
        }
    }
    const RunPaths p = m_registry.paths(run);
    reply(id,
            listRunFiles(rj->value("workdir", std::string()), p.dir, globs,
                    {p.console, p.stderrRanges, p.runJson, p.exitJson, p.cancelJson, p.jobScript, p.slurmJson}));
}

} // namespace ty::agent
