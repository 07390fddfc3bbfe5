#include "Scheduler.h"

#include "ElasticRendezvous.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ty::sched {

qint64 expectedRuntimeMs(const PendingRun& r, const Policy& p)
{
    if (r.estimatedRuntimeMs > 0)
        return r.timeLimitMs > 0 ? std::min(r.estimatedRuntimeMs, r.timeLimitMs) : r.estimatedRuntimeMs;
    if (r.timeLimitMs > 0)
        return r.timeLimitMs;
    return std::max<qint64>(1, p.defaultRuntimeMs);
}

QString fairShareAccount(const PendingRun& r, const Policy& p)
{
    return p.fairShareBy == FairShareBy::User ? r.user : r.project;
}

namespace {

using Mask = std::uint64_t;
constexpr int kMaxGpus = 64;
constexpr qint64 kNever = std::numeric_limits<qint64>::max();

// Nodes rarely have more than 8 GPUs; a table beats the libgcc popcount call
// that a build without -mpopcnt gets for std::popcount.
constexpr auto kPop8 = [] {
    std::array<std::uint8_t, 256> t{};
    for (int i = 0; i < 256; ++i)
        t[size_t(i)] = std::uint8_t(std::popcount(unsigned(i)));
    return t;
}();

// Equal strings, by identity first: copies of one QString share their data,
// and comparing a few characters is far cheaper than hashing them.
inline bool sameText(const QString& a, const QString& b)
{
    return (a.constData() == b.constData() && a.size() == b.size()) || a == b;
}

// FNV-1a over a string's UTF-16 units and its length: cheap for the short
// names NameIds holds, and lets a scan compare integers where it called out
// to compare strings for every entry (most of a fair-share pass's account
// lookups: tests/bench/RESULTS.md, "Scheduler, 2026-12-06").
inline std::uint64_t textHash(const QString& s)
{
    std::uint64_t h = 1469598103934665603ULL ^ std::uint64_t(s.size());
    const QChar* p = s.constData();
    for (qsizetype i = 0; i < s.size(); ++i) {
        h ^= p[i].unicode();
        h *= 1099511628211ULL;
    }
    return h;
}

// Names to dense ids in order of first sight. A few names (a lab's users,
// projects, sweeps) are found by scanning their hashes (textHash, then one
// string compare to confirm), cheaper than a QHash lookup; past kScan names,
// by a QHash.
class NameIds {
public:
    int idOf(const QString& name, bool* added = nullptr)
    {
        if (added)
            *added = false;
        std::uint64_t h = 0;
        if (m_names.size() <= kScan) {
            h = textHash(name);
            for (size_t i = 0; i < m_hashes.size(); ++i)
                if (m_hashes[i] == h && sameText(m_names[i], name))
                    return int(i);
        } else if (const auto it = m_ids.constFind(name); it != m_ids.constEnd()) {
            return it.value();
        }
        const int id = int(m_names.size());
        m_names.push_back(name);
        if (m_names.size() <= kScan) {
            m_hashes.push_back(h);
        } else {
            if (m_ids.isEmpty())
                for (size_t i = 0; i < m_names.size(); ++i)
                    m_ids.insert(m_names[i], int(i));
            else
                m_ids.insert(name, id);
        }
        if (added)
            *added = true;
        return id;
    }
    int size() const { return int(m_names.size()); }
    const QString& name(int id) const { return m_names[size_t(id)]; }

private:
    static constexpr size_t kScan = 16;
    std::vector<QString> m_names;
    std::vector<std::uint64_t> m_hashes; // textHash of each name, while there are at most kScan
    QHash<QString, int> m_ids;           // once there are more than kScan names
};

inline int bits(std::uint64_t m)
{
    return m < 256 ? kPop8[size_t(m)] : std::popcount(m);
}

struct GpuRt {
    int index = 0;
    qint64 memFree = 0;
    qint64 memTotal = 0;
    qint64 memFuture = 0; // free memory once Trainyard's runs on it end
    bool foreign = false;
    int nameId = 0;
};

struct NodeRt {
    int orig = 0;    // index in ClusterState::nodes
    int gpuBase = 0; // into Pass::gpus_
    int nGpu = 0;
    int cpuCap = 0;
    qint64 memCap = 0;
    bool reachable = true;
    Mask usable = 0;                 // not foreign-busy
    std::span<const Mask> pciGroups; // one mask per PCI root (the layout's); empty = unknown
};

struct SigKey {
    int cls = 0;
    int gpus = 0;
    int cpus = 0;
    int nodes = 1;    // a gang's size; an elastic one's minimum
    int maxNodes = 0; // elastic: the most nodes it takes (>= nodes); 0: exactly `nodes`
    int filter = 0;
    qint64 mem = 0;
    bool operator==(const SigKey&) const = default;
};

struct SigKeyHash {
    size_t operator()(const SigKey& k) const noexcept
    {
        std::uint64_t h = 1469598103934665603ULL;
        const auto mix = [&h](std::uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
        mix(std::uint64_t(k.cls));
        mix(std::uint64_t(k.gpus));
        mix(std::uint64_t(k.cpus));
        mix(std::uint64_t(k.nodes));
        mix(std::uint64_t(k.maxNodes));
        mix(std::uint64_t(k.filter));
        mix(std::uint64_t(k.mem));
        return size_t(h);
    }
};

struct Sig {
    SigKey k;
    bool failNow = false;
    bool failShadow = false;
    std::int8_t sat = -1; // -1 unknown, 0 never fits, 1 fits an empty cluster
    int reason = -1;      // index into Pass::sigReasons_
};

struct RunRt {
    int q = 0; // index in the input queue
    int sig = 0;
    qint64 est = 0;
    qint64 submit = 0;
    RunId id = 0;
    int sweep = -1;
    int cap = 0;
    int account = -1;
    double key = 0.0;    // ordering key (smaller first)
    double charge = 0.0; // GPU-hours expected (fair share)
    bool held = false;
    bool estDefault = false; // est is Policy::defaultRuntimeMs (no estimate, no limit)
    int pool = -1;           // Pools.h: the pool it named (index), -1 none, -2 one not configured
};

struct Part {
    int node = 0;
    Mask gpus = 0;
    int cpus = 0;
    qint64 mem = 0;
};

struct Alloc {
    qint64 end = 0;
    int first = 0; // into Pass::parts_
    int count = 0;
};

struct Filter {
    std::vector<std::uint8_t> allowed;
    std::vector<std::uint8_t> preferred;
};

} // namespace

// What a pass derives from the nodes' names and GPU inventories alone; see
// Scheduler in Scheduler.h. Indices: "pos" is a node's place in name order,
// "orig" its index in ClusterState::nodes.
struct detail::NodeLayout {
    struct GpuKey {
        QString name;
        QString pciRoot;
        int index = 0;
    };
    struct NodeKey {
        QString name;
        std::vector<GpuKey> gpus; // in ClusterState order
    };
    std::vector<NodeKey> keys; // by orig: what matches() compares

    std::vector<int> order;     // pos -> orig
    QHash<QString, int> byName; // name -> pos (of duplicates, the last in name order)
    std::vector<int> gpuBase;   // pos -> first slot in gpuOf/gpuNameId
    std::vector<int> gpuCount;  // pos -> GPUs used (at most kMaxGpus)
    std::vector<int> gpuOf;     // slot -> index into that node's NodeState::gpus, by ascending GPU index
    std::vector<int> gpuNameId; // slot -> index into gpuNames
    std::vector<QString> gpuNames;
    std::vector<std::vector<Mask>> pciGroups; // pos -> one mask per PCI root; empty = unknown

    // O(nodes + GPUs), by string identity first (a caller that copies its
    // NodeStates shares their strings).
    bool matches(const QList<NodeState>& nodes) const
    {
        if (qsizetype(keys.size()) != nodes.size())
            return false;
        for (qsizetype i = 0; i < nodes.size(); ++i) {
            const NodeKey& k = keys[size_t(i)];
            const NodeState& ns = nodes[i];
            if (!sameText(k.name, ns.name) || qsizetype(k.gpus.size()) != ns.gpus.size())
                return false;
            for (qsizetype g = 0; g < ns.gpus.size(); ++g) {
                const GpuKey& gk = k.gpus[size_t(g)];
                const GpuState& gs = ns.gpus[g];
                if (gk.index != gs.index || !sameText(gk.name, gs.name) || !sameText(gk.pciRoot, gs.pciRoot))
                    return false;
            }
        }
        return true;
    }

    explicit NodeLayout(const QList<NodeState>& nodes)
    {
        const int n = int(nodes.size());
        keys.resize(size_t(n));
        for (int i = 0; i < n; ++i) {
            NodeKey& k = keys[size_t(i)];
            k.name = nodes[i].name;
            for (const GpuState& gs : nodes[i].gpus)
                k.gpus.push_back(GpuKey{gs.name, gs.pciRoot, gs.index});
        }
        order.resize(size_t(n));
        for (int i = 0; i < n; ++i)
            order[size_t(i)] = i;
        std::sort(order.begin(), order.end(), [&nodes](int a, int b) {
            const int cmp = nodes[a].name.compare(nodes[b].name);
            return cmp != 0 ? cmp < 0 : a < b;
        });
        byName.reserve(n);
        gpuBase.resize(size_t(n));
        gpuCount.resize(size_t(n));
        pciGroups.resize(size_t(n));
        QHash<QString, int> nameIds;
        std::vector<int> gorder;
        for (int pos = 0; pos < n; ++pos) {
            const NodeState& ns = nodes[order[size_t(pos)]];
            byName.insert(ns.name, pos);
            const int ng = std::min<int>(int(ns.gpus.size()), kMaxGpus);
            gorder.resize(size_t(ns.gpus.size()));
            for (int g = 0; g < int(ns.gpus.size()); ++g)
                gorder[size_t(g)] = g;
            std::sort(
                    gorder.begin(), gorder.end(), [&ns](int a, int b) { return ns.gpus[a].index < ns.gpus[b].index; });
            gpuBase[size_t(pos)] = int(gpuOf.size());
            gpuCount[size_t(pos)] = ng;
            bool topology = false;
            for (int g = 0; g < ng; ++g) {
                const GpuState& gs = ns.gpus[gorder[size_t(g)]];
                gpuOf.push_back(gorder[size_t(g)]);
                auto it = nameIds.constFind(gs.name);
                if (it == nameIds.constEnd()) {
                    it = nameIds.insert(gs.name, int(gpuNames.size()));
                    gpuNames.push_back(gs.name);
                }
                gpuNameId.push_back(it.value());
                topology = topology || !gs.pciRoot.isEmpty();
            }
            if (topology) {
                std::vector<QString> roots;
                std::vector<Mask>& groups = pciGroups[size_t(pos)];
                for (int g = 0; g < ng; ++g) {
                    const QString& root = ns.gpus[gorder[size_t(g)]].pciRoot;
                    auto at = std::find(roots.begin(), roots.end(), root);
                    if (at == roots.end()) {
                        roots.push_back(root);
                        groups.push_back(0);
                        at = roots.end() - 1;
                    }
                    groups[size_t(at - roots.begin())] |= Mask(1) << g;
                }
            }
        }
    }
};

namespace {

struct GpuClass {
    std::vector<Mask> now;    // eligible now (type, memory free, not foreign)
    std::vector<Mask> future; // eligible once Trainyard's runs release them
};

// The free-resource arrays fit() reads; shadow arrays are optional.
struct View {
    const int* cpu = nullptr;
    const qint64* mem = nullptr;
    const Mask* gpu = nullptr;
    const std::vector<Mask>* cls = nullptr; // GpuClass::now or ::future
    const int* shadowCpu = nullptr;
    const qint64* shadowMem = nullptr;
    const Mask* reserved = nullptr;
};

struct NodeKey {
    int pref;
    int freeGpus;
    int freeCpus;
    qint64 freeMem;
    int node;
    auto operator<=>(const NodeKey&) const = default;
};

enum class Outcome : std::uint8_t { Pending, Started };

struct PendingOut {
    int run; // index into runs_
    PendingKind kind;
    RunId other = 0;
    qint64 at = 0; // BackfillHeld: the head's start; PoolQuota: index into Pass::quotaBlocks_
    bool isHead = false;
    int sig = -1; // WaitingForResources, Unsatisfiable: the request as placed (pools: its nodes), -1: the run's
};

// A run's way onto the nodes once pools are weighed (Pass::admit).
struct Admission {
    int sig = -1;        // its own nodes: its pool's, or those whose quota allows it
    int borrow = -1;     // lending pools' nodes, when it may borrow now
    int everBorrow = -1; // ... whatever its pool's borrow room now: could it ever start
    int quota = -1;      // named no pool and kept off some pool's nodes: the first such quota (quotaBlocks_)
};

class Pass {
public:
    Pass(const detail::NodeLayout& l, const ClusterState& c, const QList<PendingRun>& q, const Policy& p, qint64 now,
            const FairShareState& fs)
        : l_(l)
        , c_(c)
        , q_(q)
        , p_(p)
        , now_(now)
        , fs_(fs)
    { }

    SchedulerDecision run();

private:
    void prepareNodes();
    void prepareRunning();
    void prepareRuns();
    int internClass(const QString& regex, qint64 mem);
    int internFilter(const PendingRun& r);
    bool regexMatches(int regexId, int nameId);

    bool fit(const Sig& s, const View& v, std::vector<Part>& out);
    Mask pickGpus(int n, Mask eligible, int g) const;
    bool satisfiable(Sig& s);
    void recomputeMaxFree();
    void place(int ri, const std::vector<Part>& parts, bool consumeShadow, bool backfilled, bool borrowed);
    void computeReservation(int sig);
    bool admit(int ri, Admission& a);
    int poolFilter(int base, std::uint64_t pools, bool unpooled);
    int sigWithFilter(int sig, int filter);
    void buildReason(Sig& s, PendingReason& out);
    void emitPlacements(SchedulerDecision& d);

    const detail::NodeLayout& l_; // matches c_.nodes
    const ClusterState& c_;
    const QList<PendingRun>& q_;
    const Policy& p_;
    const qint64 now_;
    const FairShareState& fs_;

    // Nodes, sorted by name.
    int n_ = 0;
    std::vector<NodeRt> nodes_;
    std::vector<GpuRt> gpus_;
    std::vector<int> cpuFree_;
    std::vector<qint64> memFree_;
    std::vector<Mask> gpuFree_;
    int maxFreeGpus_ = 0;
    QStringList unreachable_;
    QStringList connecting_;

    // Running allocations (input) and in-pass placements, for the profile.
    std::vector<Alloc> allocs_;
    std::vector<Part> parts_;
    std::vector<std::vector<int>> portsUsed_; // per node
    NameIds sweepIds_;
    std::vector<int> sweepRunning_;

    // Interning.
    QHash<QString, int> regexIds_;
    std::vector<QRegularExpression> regexes_;
    std::vector<std::vector<std::int8_t>> regexMatch_; // [regex][gpu name]
    std::map<std::pair<int, qint64>, int> classIds_;
    std::vector<GpuClass> classes_;
    QHash<QString, int> filterIds_;
    std::vector<Filter> filters_;
    std::unordered_map<SigKey, int, SigKeyHash> sigIds_;
    std::vector<Sig> sigs_;
    std::vector<PendingReason> sigReasons_;
    std::vector<std::vector<int>> classCounts_; // buildReason(): eligible free GPUs per node, per class

    // Failed requests per (GPU class, filter, gang size): a request needing at
    // least as many GPUs, CPUs and memory as one that failed fails too (free
    // resources only shrink during a pass). [0]: fit now, [1]: fit beside the reservation.
    struct Need {
        int gpus;
        int cpus;
        qint64 mem;
    };
    std::unordered_map<std::uint64_t, std::vector<Need>> failed_[2];
    static std::uint64_t groupOf(const SigKey& k)
    {
        return (std::uint64_t(std::uint32_t(k.cls)) << 32) ^ (std::uint64_t(std::uint32_t(k.filter)) << 8)
                ^ std::uint64_t(std::uint32_t(k.nodes));
    }
    bool dominated(int which, const SigKey& k) const
    {
        const auto it = failed_[which].find(groupOf(k));
        if (it == failed_[which].end())
            return false;
        for (const Need& n : it->second)
            if (n.gpus <= k.gpus && n.cpus <= k.cpus && n.mem <= k.mem)
                return true;
        return false;
    }
    void noteFailed(int which, const SigKey& k)
    {
        auto& list = failed_[which][groupOf(k)];
        if (list.size() < 64)
            list.push_back(Need{k.gpus, k.cpus, k.mem});
    }

    // Pools (Pools.h): nothing of this is built or looked at without them.
    bool pools_ = false;
    std::vector<int> nodePool_;  // by node (name order): pool index, -1 none
    std::vector<int> poolNodes_; // by pool: how many nodes of the state are in it
    PoolUsage usage_;
    std::uint64_t lenders_ = 0; // pools that lend, by bit
    std::map<std::tuple<int, std::uint64_t, bool>, int> poolFilterIds_;
    std::vector<QuotaBlock> quotaBlocks_;

    // Fair share.
    NameIds accountIds_;
    std::vector<double> accountKey_; // usage / share: smaller = higher factor
    std::vector<double> accountShare_;

    std::vector<RunRt> runs_;

    // Reservation (the head).
    int head_ = -1;
    qint64 shadowTime_ = kNever;
    std::vector<Part> reservedParts_;
    std::vector<int> shadowCpu_;
    std::vector<qint64> shadowMem_;
    std::vector<Mask> reserved_;
    bool strictBlocked_ = false;
    bool reservationActive_ = false;
    // A run's end that estimates rest on was Policy::defaultRuntimeMs (a run
    // without estimated_runtime or time limit, running or started here).
    bool assumedDefault_ = false;

    struct Started {
        int run;
        int firstPart;
        int count;
        bool backfilled;
        bool borrowed;
    };
    std::vector<Started> started_;
    std::vector<Part> startedParts_;
    std::vector<PendingOut> pending_;
    std::vector<Part> scratch_;
};

void Pass::prepareNodes()
{
    n_ = int(c_.nodes.size());
    nodes_.resize(size_t(n_));
    cpuFree_.resize(size_t(n_));
    memFree_.resize(size_t(n_));
    gpuFree_.resize(size_t(n_));
    gpus_.reserve(l_.gpuOf.size());
    for (int n = 0; n < n_; ++n) {
        const int orig = l_.order[size_t(n)];
        const NodeState& ns = c_.nodes[orig];
        NodeRt& rt = nodes_[size_t(n)];
        rt.orig = orig;
        rt.cpuCap = ns.cpus;
        rt.memCap = ns.memoryMiB;
        rt.reachable = ns.reachable;
        rt.gpuBase = int(gpus_.size());
        if (!ns.reachable)
            (ns.connecting ? connecting_ : unreachable_) << ns.name;
        const int ng = l_.gpuCount[size_t(n)];
        const int base = l_.gpuBase[size_t(n)];
        rt.nGpu = ng;
        for (int g = 0; g < ng; ++g) {
            const GpuState& gs = ns.gpus[l_.gpuOf[size_t(base + g)]];
            GpuRt gr;
            gr.index = gs.index;
            gr.memFree = gs.memoryFreeMiB;
            gr.memTotal = gs.memoryTotalMiB;
            gr.memFuture = gs.memoryFreeMiB;
            gr.foreign = gs.foreignBusy;
            gr.nameId = l_.gpuNameId[size_t(base + g)];
            gpus_.push_back(gr);
            if (!gs.foreignBusy)
                rt.usable |= Mask(1) << g;
        }
        rt.pciGroups = l_.pciGroups[size_t(n)];
        cpuFree_[size_t(n)] = rt.cpuCap;
        memFree_[size_t(n)] = rt.memCap;
        gpuFree_[size_t(n)] = rt.reachable ? rt.usable : 0;
    }
    portsUsed_.resize(size_t(n_));
    pools_ = !p_.pools.isEmpty();
    if (pools_) {
        nodePool_.resize(size_t(n_));
        poolNodes_.assign(size_t(p_.pools.size()), 0);
        for (int n = 0; n < n_; ++n) {
            nodePool_[size_t(n)] = poolOfNode(p_.pools, c_.nodes[nodes_[size_t(n)].orig]);
            if (nodePool_[size_t(n)] >= 0)
                ++poolNodes_[size_t(nodePool_[size_t(n)])];
        }
        for (qsizetype i = 0; i < p_.pools.size() && i < kMaxPools; ++i)
            if (p_.pools[i].lend)
                lenders_ |= std::uint64_t(1) << i;
    }
}

void Pass::prepareRunning()
{
    for (const RunningAllocation& a : c_.running) {
        qint64 end;
        if (a.estimatedEndMs > 0)
            end = a.timeLimitMs > 0 ? std::min(a.estimatedEndMs, a.startMs + a.timeLimitMs) : a.estimatedEndMs;
        else if (a.timeLimitMs > 0)
            end = a.startMs + a.timeLimitMs;
        else {
            end = a.startMs + std::max<qint64>(1, p_.defaultRuntimeMs);
            assumedDefault_ = true;
        }
        end = std::max(end, now_);
        Alloc al;
        al.end = end;
        al.first = int(parts_.size());
        for (const NodeShare& s : a.nodes) {
            const auto it = l_.byName.constFind(s.node);
            if (it == l_.byName.constEnd())
                continue; // node gone from the state: nothing to free there
            const int n = it.value();
            const NodeRt& rt = nodes_[size_t(n)];
            Part part;
            part.node = n;
            part.cpus = s.cpus;
            part.mem = s.memoryMiB;
            for (int idx : s.gpuIndices) {
                for (int g = 0; g < rt.nGpu; ++g) {
                    GpuRt& gr = gpus_[size_t(rt.gpuBase + g)];
                    if (gr.index == idx) {
                        part.gpus |= Mask(1) << g;
                        gr.memFuture = std::max(gr.memFree, gr.memTotal);
                        break;
                    }
                }
            }
            cpuFree_[size_t(n)] -= part.cpus;
            memFree_[size_t(n)] -= part.mem;
            gpuFree_[size_t(n)] &= ~part.gpus;
            if (s.port > 0)
                portsUsed_[size_t(n)].push_back(s.port);
            parts_.push_back(part);
        }
        al.count = int(parts_.size()) - al.first;
        allocs_.push_back(al);
        if (!a.sweepId.isEmpty()) {
            bool added = false;
            const int id = sweepIds_.idOf(a.sweepId, &added);
            if (added)
                sweepRunning_.push_back(0);
            ++sweepRunning_[size_t(id)];
        }
        if (p_.ordering == Ordering::FairShare) {
            accountIds_.idOf(p_.fairShareBy == FairShareBy::User ? a.user : a.project);
        }
    }
    if (pools_) {
        QHash<QString, int> nodePool;
        for (int n = 0; n < n_; ++n)
            if (nodePool_[size_t(n)] >= 0)
                nodePool.insert(c_.nodes[nodes_[size_t(n)].orig].name, nodePool_[size_t(n)]);
        usage_ = PoolUsage(p_.pools);
        usage_.chargeRunning(c_, nodePool);
    }
}

bool Pass::regexMatches(int regexId, int nameId)
{
    auto& row = regexMatch_[size_t(regexId)];
    if (row.size() < l_.gpuNames.size())
        row.resize(l_.gpuNames.size(), -1);
    std::int8_t& m = row[size_t(nameId)];
    if (m < 0) {
        const QRegularExpression& re = regexes_[size_t(regexId)];
        m = re.isValid() && re.match(l_.gpuNames[size_t(nameId)]).hasMatch() ? 1 : 0;
    }
    return m == 1;
}

int Pass::internClass(const QString& regex, qint64 mem)
{
    int regexId = -1;
    if (!regex.isEmpty()) {
        auto it = regexIds_.constFind(regex);
        if (it == regexIds_.constEnd()) {
            it = regexIds_.insert(regex, int(regexes_.size()));
            regexes_.emplace_back(regex);
            regexMatch_.emplace_back();
        }
        regexId = it.value();
    }
    const auto key = std::make_pair(regexId, std::max<qint64>(0, mem));
    const auto found = classIds_.find(key);
    if (found != classIds_.end())
        return found->second;
    GpuClass cls;
    cls.now.assign(size_t(n_), 0);
    cls.future.assign(size_t(n_), 0);
    for (int n = 0; n < n_; ++n) {
        const NodeRt& rt = nodes_[size_t(n)];
        if (!rt.reachable)
            continue;
        for (int g = 0; g < rt.nGpu; ++g) {
            const GpuRt& gr = gpus_[size_t(rt.gpuBase + g)];
            if (regexId >= 0 && !regexMatches(regexId, gr.nameId))
                continue;
            // A foreign-busy GPU (a process Trainyard did not start, another
            // instance's claim) is never allocated now, but it counts for
            // "could this run ever start": it frees up when that process ends.
            if (!gr.foreign && gr.memFree >= key.second)
                cls.now[size_t(n)] |= Mask(1) << g;
            if ((gr.foreign ? gr.memTotal : gr.memFuture) >= key.second)
                cls.future[size_t(n)] |= Mask(1) << g;
        }
    }
    const int id = int(classes_.size());
    classes_.push_back(std::move(cls));
    classIds_.emplace(key, id);
    return id;
}

int Pass::internFilter(const PendingRun& r)
{
    if (r.preferNodes.isEmpty() && r.preferLabels.isEmpty() && r.avoidNodes.isEmpty() && r.avoidLabels.isEmpty())
        return 0;
    const QChar sep(0x1f);
    const QString key = r.preferNodes.join(sep) + QChar(0x1e) + r.preferLabels.join(sep) + QChar(0x1e)
            + r.avoidNodes.join(sep) + QChar(0x1e) + r.avoidLabels.join(sep);
    const auto it = filterIds_.constFind(key);
    if (it != filterIds_.constEnd())
        return it.value();
    Filter f;
    f.allowed.assign(size_t(n_), 1);
    f.preferred.assign(size_t(n_), 0);
    for (int n = 0; n < n_; ++n) {
        const NodeState& ns = c_.nodes[nodes_[size_t(n)].orig];
        const auto hasLabel = [&ns](const QStringList& labels) {
            for (const QString& l : labels)
                if (ns.labels.contains(l))
                    return true;
            return false;
        };
        if (!nodes_[size_t(n)].reachable || r.avoidNodes.contains(ns.name) || hasLabel(r.avoidLabels))
            f.allowed[size_t(n)] = 0;
        if (r.preferNodes.contains(ns.name) || hasLabel(r.preferLabels))
            f.preferred[size_t(n)] = 1;
    }
    const int id = int(filters_.size());
    filters_.push_back(std::move(f));
    filterIds_.insert(key, id);
    return id;
}

void Pass::prepareRuns()
{
    // Filter 0: no preferences; only reachability.
    Filter none;
    none.allowed.assign(size_t(n_), 0);
    none.preferred.assign(size_t(n_), 0);
    for (int n = 0; n < n_; ++n)
        none.allowed[size_t(n)] = nodes_[size_t(n)].reachable ? 1 : 0;
    filters_.push_back(std::move(none));

    const int q = int(q_.size());
    runs_.resize(size_t(q));
    sigIds_.reserve(64);
    int lastClass = -1;
    QString lastRegex;
    qint64 lastMem = -1;
    const bool byUser = p_.fairShareBy == FairShareBy::User;
    for (int i = 0; i < q; ++i) {
        const PendingRun& r = q_[i];
        RunRt& rt = runs_[size_t(i)];
        rt.q = i;
        rt.id = r.id;
        rt.submit = r.submitMs;
        rt.held = r.held;
        rt.est = expectedRuntimeMs(r, p_);
        rt.estDefault = r.estimatedRuntimeMs <= 0 && r.timeLimitMs <= 0;
        if (pools_ && !r.pool.isEmpty()) {
            const int pool = poolIndex(p_.pools, r.pool);
            rt.pool = pool >= 0 && pool < kMaxPools ? pool : -2;
        }
        if (lastClass < 0 || r.gpuMemoryMiB != lastMem || r.gpuTypeRegex != lastRegex) {
            lastClass = internClass(r.gpuTypeRegex, r.gpuMemoryMiB);
            lastRegex = r.gpuTypeRegex;
            lastMem = r.gpuMemoryMiB;
        }
        SigKey k;
        k.cls = lastClass;
        k.gpus = std::max(0, r.gpus);
        k.cpus = std::max(0, r.cpus);
        k.nodes = std::max(1, r.nodes);
        k.maxNodes = r.nodesMax > 0 ? std::max(k.nodes, r.nodesMax) : 0;
        k.filter = internFilter(r);
        k.mem = std::max<qint64>(0, r.memoryMiB);
        auto [it, inserted] = sigIds_.try_emplace(k, int(sigs_.size()));
        if (inserted) {
            Sig s;
            s.k = k;
            sigs_.push_back(s);
        }
        rt.sig = it->second;
        if (!r.sweepId.isEmpty() && r.sweepMaxConcurrent > 0) {
            bool added = false;
            rt.sweep = sweepIds_.idOf(r.sweepId, &added);
            if (added)
                sweepRunning_.push_back(0);
            rt.cap = r.sweepMaxConcurrent;
        }
        switch (p_.ordering) {
        case Ordering::Fcfs: rt.key = 0.0; break;
        case Ordering::Priority:
            rt.key = -(double(r.priority) + p_.agingPerHour * double(std::max<qint64>(0, now_ - r.submitMs)) / 3.6e6);
            break;
        case Ordering::ShortestJobFirst: rt.key = double(rt.est); break;
        case Ordering::FairShare: {
            const QString& acc = byUser ? r.user : r.project; // fairShareAccount(), without the copy
            rt.account = accountIds_.idOf(acc);
            rt.key = -double(r.priority);
            rt.charge = double(k.gpus) * double(k.nodes) * double(rt.est) / 3.6e6;
            break;
        }
        }
    }
    if (p_.ordering == Ordering::FairShare) {
        for (auto it = fs_.usageGpuHours.constBegin(); it != fs_.usageGpuHours.constEnd(); ++it)
            accountIds_.idOf(it.key());
        // Ordering by F = 2^(-(u/U)/(s/S)) is ordering by u/s (U and S are common to all accounts).
        accountKey_.assign(size_t(accountIds_.size()), 0.0);
        accountShare_.assign(size_t(accountIds_.size()), 0.0);
        for (int id = 0; id < accountIds_.size(); ++id) {
            const QString& account = accountIds_.name(id);
            const double usage = fs_.usageGpuHours.value(account, 0.0);
            const double share = p_.shares.value(account, p_.defaultShare);
            double key = 0.0;
            if (usage > 0.0)
                key = share > 0.0 ? usage / share : std::numeric_limits<double>::infinity();
            accountKey_[size_t(id)] = key;
            accountShare_[size_t(id)] = share;
        }
    }
}

void Pass::recomputeMaxFree()
{
    int m = 0;
    for (int n = 0; n < n_; ++n)
        m = std::max(m, bits(gpuFree_[size_t(n)]));
    maxFreeGpus_ = m;
}

Mask Pass::pickGpus(int n, Mask eligible, int g) const
{
    if (g <= 0)
        return 0;
    const auto lowest = [](Mask m, int count) {
        Mask out = 0;
        for (int i = 0; i < count && m; ++i) {
            const Mask bit = m & (~m + 1);
            out |= bit;
            m &= m - 1;
        }
        return out;
    };
    const NodeRt& rt = nodes_[size_t(n)];
    if (p_.placement == PlacementRule::FirstFit || rt.pciGroups.size() <= 1)
        return lowest(eligible, g);
    // Best-fitting single root, else roots with the most eligible GPUs first.
    int best = -1;
    int bestCount = kMaxGpus + 1;
    for (size_t i = 0; i < rt.pciGroups.size(); ++i) {
        const int cnt = bits(eligible & rt.pciGroups[i]);
        if (cnt >= g && cnt < bestCount) {
            best = int(i);
            bestCount = cnt;
        }
    }
    if (best >= 0)
        return lowest(eligible & rt.pciGroups[size_t(best)], g);
    std::vector<std::pair<int, int>> groups; // (-count, lowest bit)
    for (const Mask gm : rt.pciGroups) {
        const Mask m = eligible & gm;
        if (m)
            groups.emplace_back(-bits(m), std::countr_zero(m));
    }
    std::sort(groups.begin(), groups.end());
    Mask out = 0;
    int left = g;
    for (const auto& [negCount, low] : groups) {
        for (const Mask gm : rt.pciGroups) {
            if (gm & (Mask(1) << low)) {
                const int take = std::min(left, -negCount);
                out |= lowest(eligible & gm, take);
                left -= take;
                break;
            }
        }
        if (left == 0)
            break;
    }
    return out;
}

bool Pass::fit(const Sig& s, const View& v, std::vector<Part>& out)
{
    out.clear();
    const SigKey& k = s.k;
    const Filter& f = filters_[size_t(k.filter)];
    const std::vector<Mask>& cls = *v.cls;
    const bool firstFit = p_.placement == PlacementRule::FirstFit;
    const auto nodeFits = [&](int n, Mask& eligible) {
        if (!f.allowed[size_t(n)] || v.cpu[n] < k.cpus || v.mem[n] < k.mem)
            return false;
        if (v.shadowCpu && (v.shadowCpu[n] < k.cpus || v.shadowMem[n] < k.mem))
            return false;
        Mask m = v.gpu[n] & cls[size_t(n)];
        if (v.reserved)
            m &= ~v.reserved[n];
        if (bits(m) < k.gpus)
            return false;
        eligible = m;
        return true;
    };
    const auto keyOf = [&](int n) {
        const int pref = f.preferred[size_t(n)] ? 0 : 1;
        if (firstFit)
            return NodeKey{pref, 0, 0, 0, n};
        return NodeKey{pref, bits(v.gpu[n]), v.cpu[n], v.mem[n], n};
    };
    if (k.nodes == 1 && k.maxNodes <= 1) {
        int best = -1;
        Mask bestMask = 0;
        NodeKey bestKey{};
        for (int n = 0; n < n_; ++n) {
            Mask m;
            if (!nodeFits(n, m))
                continue;
            const NodeKey key = keyOf(n);
            if (best < 0 || key < bestKey) {
                best = n;
                bestKey = key;
                bestMask = m;
                if (firstFit && key.pref == 0)
                    break;
            }
        }
        if (best < 0)
            return false;
        out.push_back(Part{best, pickGpus(best, bestMask, k.gpus), k.cpus, k.mem});
        return true;
    }
    std::vector<std::pair<NodeKey, Mask>> cands;
    for (int n = 0; n < n_; ++n) {
        Mask m;
        if (nodeFits(n, m))
            cands.emplace_back(keyOf(n), m);
    }
    if (int(cands.size()) < k.nodes)
        return false;
    const int take = elasticNodeCount(int(cands.size()), k.nodes, k.maxNodes);
    std::partial_sort(cands.begin(), cands.begin() + take, cands.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int i = 0; i < take; ++i) {
        const int n = cands[size_t(i)].first.node;
        out.push_back(Part{n, pickGpus(n, cands[size_t(i)].second, k.gpus), k.cpus, k.mem});
    }
    return true;
}

bool Pass::satisfiable(Sig& s)
{
    if (s.sat >= 0)
        return s.sat == 1;
    const SigKey& k = s.k;
    const Filter& f = filters_[size_t(k.filter)];
    const GpuClass& cls = classes_[size_t(k.cls)];
    int fits = 0;
    for (int n = 0; n < n_ && fits < k.nodes; ++n) {
        const NodeRt& rt = nodes_[size_t(n)];
        if (f.allowed[size_t(n)] && rt.cpuCap >= k.cpus && rt.memCap >= k.mem && bits(cls.future[size_t(n)]) >= k.gpus)
            ++fits;
    }
    s.sat = fits >= k.nodes ? 1 : 0;
    return s.sat == 1;
}

void Pass::place(int ri, const std::vector<Part>& parts, bool consumeShadow, bool backfilled, bool borrowed)
{
    RunRt& r = runs_[size_t(ri)];
    assumedDefault_ = assumedDefault_ || r.estDefault;
    Started st{ri, int(startedParts_.size()), int(parts.size()), backfilled, borrowed};
    if (pools_) {
        const PendingRun& pr = q_[r.q];
        if (r.pool >= 0) {
            int gpus = 0;
            for (const Part& part : parts)
                gpus += bits(part.gpus);
            usage_.charge(r.pool, pr.user, pr.project, gpus, borrowed);
        } else {
            for (const Part& part : parts)
                usage_.charge(nodePool_[size_t(part.node)], pr.user, pr.project, bits(part.gpus), false);
        }
    }
    bool touchedMax = false;
    for (const Part& part : parts) {
        const size_t n = size_t(part.node);
        touchedMax = touchedMax || (part.gpus && bits(gpuFree_[n]) == maxFreeGpus_);
        gpuFree_[n] &= ~part.gpus;
        cpuFree_[n] -= part.cpus;
        memFree_[n] -= part.mem;
        if (consumeShadow) {
            shadowCpu_[n] -= part.cpus;
            shadowMem_[n] -= part.mem;
        }
        startedParts_.push_back(part);
    }
    started_.push_back(st);
    if (head_ < 0) {
        // Before any reservation: the profile must see this run end.
        Alloc al{now_ + r.est, int(parts_.size()), int(parts.size())};
        for (const Part& part : parts)
            parts_.push_back(part);
        allocs_.push_back(al);
    }
    if (r.sweep >= 0)
        ++sweepRunning_[size_t(r.sweep)];
    if (touchedMax) // best fit rarely takes from the emptiest node: skip the O(nodes) scan then
        recomputeMaxFree();
}

void Pass::computeReservation(int sig)
{
    // An elastic head is reserved its minimum: it starts once that many
    // nodes are free, so holding more back would only idle them.
    Sig s = sigs_[size_t(sig)];
    s.k.maxNodes = 0;
    std::vector<int> cpu = cpuFree_;
    std::vector<qint64> mem = memFree_;
    std::vector<Mask> gpu = gpuFree_;
    std::vector<int> order(allocs_.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int(i);
    std::sort(order.begin(), order.end(), [this](int a, int b) {
        return allocs_[size_t(a)].end != allocs_[size_t(b)].end ? allocs_[size_t(a)].end < allocs_[size_t(b)].end
                                                                : a < b;
    });
    View v;
    v.cpu = cpu.data();
    v.mem = mem.data();
    v.gpu = gpu.data();
    v.cls = &classes_[size_t(s.k.cls)].future;
    size_t i = 0;
    while (i < order.size()) {
        const qint64 t = allocs_[size_t(order[i])].end;
        for (; i < order.size() && allocs_[size_t(order[i])].end == t; ++i) {
            const Alloc& al = allocs_[size_t(order[i])];
            for (int p = al.first; p < al.first + al.count; ++p) {
                const Part& part = parts_[size_t(p)];
                const size_t n = size_t(part.node);
                cpu[n] += part.cpus;
                mem[n] += part.mem;
                gpu[n] |= part.gpus & (nodes_[n].reachable ? nodes_[n].usable : 0);
            }
        }
        if (fit(s, v, reservedParts_)) {
            shadowTime_ = t;
            shadowCpu_ = std::move(cpu);
            shadowMem_ = std::move(mem);
            reserved_.assign(size_t(n_), 0);
            for (const Part& part : reservedParts_) {
                shadowCpu_[size_t(part.node)] -= part.cpus;
                shadowMem_[size_t(part.node)] -= part.mem;
                reserved_[size_t(part.node)] |= part.gpus;
            }
            return;
        }
    }
    reservedParts_.clear();
    shadowTime_ = kNever;
}

int Pass::poolFilter(int base, std::uint64_t pools, bool unpooled)
{
    const auto key = std::make_tuple(base, pools, unpooled);
    if (const auto it = poolFilterIds_.find(key); it != poolFilterIds_.end())
        return it->second;
    Filter f = filters_[size_t(base)];
    for (int n = 0; n < n_; ++n) {
        const int pool = nodePool_[size_t(n)];
        if (pool < 0 ? !unpooled : !(pools & (std::uint64_t(1) << pool)))
            f.allowed[size_t(n)] = 0;
    }
    const int id = int(filters_.size());
    filters_.push_back(std::move(f));
    poolFilterIds_.emplace(key, id);
    return id;
}

int Pass::sigWithFilter(int sig, int filter)
{
    SigKey k = sigs_[size_t(sig)].k;
    k.filter = filter;
    auto [it, inserted] = sigIds_.try_emplace(k, int(sigs_.size()));
    if (inserted) {
        Sig s;
        s.k = k;
        sigs_.push_back(s);
    }
    return it->second;
}

// Pools.h: whether run `ri` may be offered to the nodes at all now, and on
// which. False: it waits (PoolQuota, NoSuchPool; pushed here).
bool Pass::admit(int ri, Admission& a)
{
    const RunRt& r = runs_[size_t(ri)];
    const PendingRun& pr = q_[r.q];
    const SigKey base = sigs_[size_t(r.sig)].k;
    const int need = base.gpus * base.nodes;
    a = Admission{r.sig, -1, -1, -1};
    if (r.pool == -2) {
        pending_.push_back({ri, PendingKind::NoSuchPool});
        return false;
    }
    if (r.pool >= 0) {
        if (auto block = usage_.check(r.pool, pr.user, pr.project, need)) {
            pending_.push_back({ri, PendingKind::PoolQuota, 0, qint64(quotaBlocks_.size())});
            quotaBlocks_.push_back(std::move(*block));
            return false;
        }
        const std::uint64_t own = std::uint64_t(1) << r.pool;
        a.sig = sigWithFilter(r.sig, poolFilter(base.filter, own, false));
        const int limit = p_.pools[r.pool].borrowLimit;
        if (limit > 0 && need <= limit && (lenders_ & ~own)) {
            a.everBorrow = sigWithFilter(r.sig, poolFilter(base.filter, lenders_ & ~own, false));
            if (usage_.borrowRoom(r.pool) >= need)
                a.borrow = a.everBorrow;
        }
        if (poolNodes_[size_t(r.pool)] == 0 && a.everBorrow < 0) {
            // No node carries the pool's labels (now): it waits for one.
            pending_.push_back({ri, PendingKind::EmptyPool});
            return false;
        }
        return true;
    }
    // Named no pool: kept off the nodes of pools whose quota it would exceed.
    std::uint64_t allowed = 0;
    const int pools = std::min<int>(int(p_.pools.size()), kMaxPools);
    for (int i = 0; i < pools; ++i) {
        if (auto block = usage_.check(i, pr.user, pr.project, need)) {
            if (a.quota < 0) {
                a.quota = int(quotaBlocks_.size());
                quotaBlocks_.push_back(std::move(*block));
            }
        } else {
            allowed |= std::uint64_t(1) << i;
        }
    }
    if (a.quota >= 0)
        a.sig = sigWithFilter(r.sig, poolFilter(base.filter, allowed, true));
    return true;
}

void Pass::buildReason(Sig& s, PendingReason& out)
{
    if (s.reason < 0) {
        const SigKey& k = s.k;
        const Filter& f = filters_[size_t(k.filter)];
        const GpuClass& cls = classes_[size_t(k.cls)];
        const bool never = s.sat == 0;
        // Eligible free GPUs per node for this class, as of the end of the pass.
        if (classCounts_.size() < classes_.size())
            classCounts_.resize(classes_.size());
        std::vector<int>& nowCounts = classCounts_[size_t(k.cls)];
        if (nowCounts.empty()) {
            nowCounts.resize(size_t(n_));
            for (int n = 0; n < n_; ++n)
                nowCounts[size_t(n)] = bits(gpuFree_[size_t(n)] & cls.now[size_t(n)]);
        }
        PendingReason r;
        r.gpus = k.gpus;
        r.cpus = k.cpus;
        r.memoryMiB = k.mem;
        r.nodes = k.nodes;
        r.nodesMax = k.maxNodes;
        r.unreachableNodes = unreachable_;
        r.connectingNodes = connecting_;
        // Closest node: most eligible GPUs (capped at the need), then CPUs and
        // memory sufficient, then name. Gang runs: among nodes that do not fit.
        int best = -1;
        std::tuple<int, int, int, int, qint64> bestKey{};
        for (int n = 0; n < n_; ++n) {
            if (!f.allowed[size_t(n)])
                continue;
            const NodeRt& rt = nodes_[size_t(n)];
            const int gpus = never ? bits(cls.future[size_t(n)]) : nowCounts[size_t(n)];
            const int cpus = never ? rt.cpuCap : cpuFree_[size_t(n)];
            const qint64 mem = never ? rt.memCap : memFree_[size_t(n)];
            const bool fits = gpus >= k.gpus && cpus >= k.cpus && mem >= k.mem;
            if (fits) {
                ++r.fittingNodes;
                continue;
            }
            const auto key = std::make_tuple(std::min(gpus, k.gpus), int(cpus >= k.cpus), int(mem >= k.mem), cpus, mem);
            if (best < 0 || key > bestKey) {
                best = n;
                bestKey = key;
                r.bestNodeGpus = gpus;
                r.bestNodeCpus = cpus;
                r.bestNodeMemoryMiB = mem;
                r.bestNodeCpuTotal = rt.cpuCap;
                r.bestNodeMemoryTotalMiB = rt.memCap;
            }
        }
        if (best >= 0)
            r.bestNode = c_.nodes[nodes_[size_t(best)].orig].name;
        s.reason = int(sigReasons_.size());
        sigReasons_.push_back(std::move(r));
    }
    const PendingReason& cached = sigReasons_[size_t(s.reason)];
    out.gpus = cached.gpus;
    out.cpus = cached.cpus;
    out.memoryMiB = cached.memoryMiB;
    out.nodes = cached.nodes;
    out.nodesMax = cached.nodesMax;
    out.bestNode = cached.bestNode;
    out.bestNodeGpus = cached.bestNodeGpus;
    out.bestNodeCpus = cached.bestNodeCpus;
    out.bestNodeMemoryMiB = cached.bestNodeMemoryMiB;
    out.bestNodeCpuTotal = cached.bestNodeCpuTotal;
    out.bestNodeMemoryTotalMiB = cached.bestNodeMemoryTotalMiB;
    out.fittingNodes = cached.fittingNodes;
    out.unreachableNodes = cached.unreachableNodes;
    out.connectingNodes = cached.connectingNodes;
}

NodeAssignment makeAssignment(const NodeState& ns, const std::vector<GpuRt>& gpus, const NodeRt& rt, const Part& part)
{
    NodeAssignment a;
    a.node = ns.name;
    a.cpus = part.cpus;
    a.memoryMiB = part.mem;
    for (int g = 0; g < rt.nGpu; ++g) {
        if (!(part.gpus & (Mask(1) << g)))
            continue;
        const int idx = gpus[size_t(rt.gpuBase + g)].index;
        a.gpuIndices << idx;
        for (const GpuState& gs : ns.gpus)
            if (gs.index == idx) {
                a.gpuUuids << gs.uuid;
                break;
            }
    }
    return a;
}

void Pass::emitPlacements(SchedulerDecision& d)
{
    const int lo = std::max(1, std::min(p_.portMin, p_.portMax));
    const int hi = std::max(lo, std::max(p_.portMin, p_.portMax));
    const qint64 span = qint64(hi) - lo + 1;
    for (int n = 0; n < n_; ++n)
        for (int port : c_.nodes[nodes_[size_t(n)].orig].portsInUse)
            portsUsed_[size_t(n)].push_back(port);
    const auto choosePort = [&](int n, RunId id) {
        std::vector<int>& used = portsUsed_[size_t(n)];
        const qint64 start = ((id % span) + span) % span;
        for (qint64 i = 0; i < span; ++i) {
            const int port = int(lo + (start + i) % span);
            if (std::find(used.begin(), used.end(), port) == used.end()) {
                used.push_back(port);
                return port;
            }
        }
        return 0;
    };

    d.placements.reserve(qsizetype(started_.size()));
    for (const Started& st : started_) {
        const RunRt& r = runs_[size_t(st.run)];
        const PendingRun& pr = q_[r.q];
        RunPlacement pl;
        pl.run = r.id;
        pl.expectedEndMs = now_ + r.est;
        pl.backfilled = st.backfilled;
        if (pools_) {
            const int first = st.count > 0 ? nodePool_[size_t(startedParts_[size_t(st.firstPart)].node)] : -1;
            const int own = r.pool >= 0 ? r.pool : first;
            if (own >= 0)
                pl.pool = p_.pools[own].name;
            pl.borrowed = st.borrowed;
            if (st.borrowed && first >= 0)
                pl.lentBy = p_.pools[first].name;
        }
        pl.elastic = pr.nodesMax > 0;
        for (int i = 0; i < st.count; ++i) {
            const Part& part = startedParts_[size_t(st.firstPart + i)];
            const NodeRt& rt = nodes_[size_t(part.node)];
            pl.nodes << makeAssignment(c_.nodes[rt.orig], gpus_, rt, part);
        }
        const bool rendezvous = st.count > 1 || pr.distributed != DistributedKind::None || pl.elastic;
        if (rendezvous) {
            const bool tf = pr.distributed == DistributedKind::TensorFlow;
            QStringList hosts;
            for (int i = 0; i < st.count; ++i) {
                NodeAssignment& a = pl.nodes[i];
                const Part& part = startedParts_[size_t(st.firstPart + i)];
                if (i == 0 || tf)
                    a.port = choosePort(part.node, r.id);
                const NodeState& ns = c_.nodes[nodes_[size_t(part.node)].orig];
                hosts << (ns.address.isEmpty() ? ns.name : ns.address);
            }
            const int nproc = std::max(1, pr.gpus);
            const QString masterAddr = hosts.first();
            const QString masterPort = QString::number(pl.nodes.first().port);
            QJsonArray workers;
            if (tf)
                for (int i = 0; i < st.count; ++i)
                    workers.append(QString(hosts[i] + QLatin1Char(':') + QString::number(pl.nodes[i].port)));
            for (int i = 0; i < st.count; ++i) {
                auto& env = pl.nodes[i].env;
                env.insert(u"MASTER_ADDR"_qs, masterAddr);
                env.insert(u"MASTER_PORT"_qs, masterPort);
                env.insert(u"WORLD_SIZE"_qs, QString::number(st.count * nproc));
                env.insert(u"NODE_RANK"_qs, QString::number(i));
                env.insert(u"NNODES"_qs, QString::number(st.count));
                env.insert(u"NPROC_PER_NODE"_qs, QString::number(nproc));
                if (tf) {
                    QJsonObject cluster{{u"worker"_qs, workers}};
                    QJsonObject task{{u"type"_qs, u"worker"_qs}, {u"index"_qs, i}};
                    QJsonObject cfg{{u"cluster"_qs, cluster}, {u"task"_qs, task}};
                    env.insert(u"TF_CONFIG"_qs, QString::fromUtf8(QJsonDocument(cfg).toJson(QJsonDocument::Compact)));
                }
            }
            if (pl.elastic)
                addElasticRendezvous(pl.nodes, std::max(1, pr.nodes), std::max(std::max(1, pr.nodes), pr.nodesMax),
                        masterAddr, pl.nodes.first().port);
        }
        d.placements << pl;
    }
}

SchedulerDecision Pass::run()
{
    prepareNodes();
    prepareRunning();
    prepareRuns();
    recomputeMaxFree();

    const int q = int(runs_.size());
    // Static orderings: sort once. Fair share: per-account lists merged by a heap.
    std::vector<int> order;
    std::vector<std::vector<int>> perAccount;
    std::vector<size_t> accountPos;
    using HeapItem = std::tuple<double, qint64, RunId, int>; // key, submit, id, account
    std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<>> heap;
    const auto runLess = [this](int a, int b) {
        const RunRt& x = runs_[size_t(a)];
        const RunRt& y = runs_[size_t(b)];
        if (x.key != y.key)
            return x.key < y.key;
        if (x.submit != y.submit)
            return x.submit < y.submit;
        if (x.id != y.id)
            return x.id < y.id;
        return a < b;
    };
    const bool fair = p_.ordering == Ordering::FairShare;
    if (!fair) {
        // Sort contiguous keys, not indices into runs_: far fewer cache misses.
        struct Key {
            double key;
            qint64 submit;
            RunId id;
            int idx;
        };
        std::vector<Key> keys(static_cast<size_t>(q));
        for (int i = 0; i < q; ++i) {
            const RunRt& r = runs_[size_t(i)];
            keys[size_t(i)] = Key{r.key, r.submit, r.id, i};
        }
        std::sort(keys.begin(), keys.end(), [](const Key& x, const Key& y) {
            if (x.key != y.key)
                return x.key < y.key;
            if (x.submit != y.submit)
                return x.submit < y.submit;
            if (x.id != y.id)
                return x.id < y.id;
            return x.idx < y.idx;
        });
        order.resize(size_t(q));
        for (int i = 0; i < q; ++i)
            order[size_t(i)] = keys[size_t(i)].idx;
    } else {
        perAccount.resize(accountKey_.size());
        accountPos.assign(accountKey_.size(), 0);
        for (int i = 0; i < q; ++i)
            perAccount[size_t(runs_[size_t(i)].account)].push_back(i);
        for (size_t a = 0; a < perAccount.size(); ++a) {
            auto& list = perAccount[a];
            if (list.empty())
                continue;
            std::sort(list.begin(), list.end(), runLess);
            const RunRt& first = runs_[size_t(list.front())];
            heap.emplace(accountKey_[a], first.submit, first.id, int(a));
        }
    }
    int consumed = 0;
    const auto next = [&]() -> int {
        if (!fair)
            return consumed < q ? order[size_t(consumed++)] : -1;
        if (heap.empty())
            return -1;
        const int a = std::get<3>(heap.top());
        heap.pop();
        const int ri = perAccount[size_t(a)][accountPos[size_t(a)]++];
        ++consumed;
        return ri;
    };
    const auto requeue = [&](int ri, bool started) {
        if (!fair)
            return;
        const int a = runs_[size_t(ri)].account;
        if (started) {
            const double share = accountShare_[size_t(a)];
            // In-pass charge: the run's expected GPU-hours, so one pass over a burst
            // splits free GPUs by share instead of handing them all to one account.
            accountKey_[size_t(a)]
                    += share > 0.0 ? runs_[size_t(ri)].charge / share : std::numeric_limits<double>::infinity();
        }
        if (accountPos[size_t(a)] < perAccount[size_t(a)].size()) {
            const RunRt& nx = runs_[size_t(perAccount[size_t(a)][accountPos[size_t(a)]])];
            heap.emplace(accountKey_[size_t(a)], nx.submit, nx.id, a);
        }
    };

    View nowView;
    nowView.cpu = cpuFree_.data();
    nowView.mem = memFree_.data();
    nowView.gpu = gpuFree_.data();

    // Whether run `ri` fits now as request `sig` asks; started, or held for
    // the head's reservation (backfill).
    enum class Try { Started, Held, NoFit };
    const auto attempt = [&](int ri, int sig, bool borrowed) {
        const RunRt& r = runs_[size_t(ri)];
        Sig& s = sigs_[size_t(sig)];
        nowView.cls = &classes_[size_t(s.k.cls)].now;
        const bool fitsNow = !s.failNow && s.k.gpus <= maxFreeGpus_ && !dominated(0, s.k) && fit(s, nowView, scratch_);
        if (!fitsNow && !s.failNow) {
            s.failNow = true;
            noteFailed(0, s.k);
        }
        if (!fitsNow)
            return Try::NoFit;
        if (reservationActive_ && now_ + r.est > shadowTime_) {
            View sv = nowView;
            sv.shadowCpu = shadowCpu_.data();
            sv.shadowMem = shadowMem_.data();
            sv.reserved = reserved_.data();
            if (!s.failShadow && !dominated(1, s.k) && fit(s, sv, scratch_)) {
                place(ri, scratch_, true, true, borrowed);
                return Try::Started;
            }
            if (!s.failShadow)
                noteFailed(1, s.k);
            s.failShadow = true;
            return Try::Held;
        }
        place(ri, scratch_, false, reservationActive_, borrowed);
        return Try::Started;
    };

    // Whether run `ri` would fit now on every node its pools' quotas allow
    // or not (a run that named no pool), placing nothing.
    std::vector<Part> probe;
    const auto fitsIgnoringQuota = [&](int ri) {
        Sig& s = sigs_[size_t(runs_[size_t(ri)].sig)];
        if (s.failNow || s.k.gpus > maxFreeGpus_ || dominated(0, s.k))
            return false;
        View v = nowView;
        v.cls = &classes_[size_t(s.k.cls)].now;
        if (fit(s, v, probe))
            return true;
        s.failNow = true;
        noteFailed(0, s.k);
        return false;
    };

    pending_.reserve(size_t(q));
    Admission adm;
    for (int ri = next(); ri >= 0; ri = next()) {
        RunRt& r = runs_[size_t(ri)];
        bool started = false;
        if (r.held) {
            pending_.push_back({ri, PendingKind::Held});
        } else if (r.sweep >= 0 && sweepRunning_[size_t(r.sweep)] >= r.cap) {
            pending_.push_back({ri, PendingKind::SweepCap});
        } else if (pools_ && !admit(ri, adm)) {
            // Over its quota (or no such pool): waits, and blocks nobody.
        } else if (strictBlocked_) {
            pending_.push_back({ri, PendingKind::BlockedByHead, runs_[size_t(head_)].id});
        } else {
            const int sig = pools_ ? adm.sig : r.sig;
            if (!satisfiable(sigs_[size_t(sig)])
                    && !(pools_ && adm.everBorrow >= 0 && satisfiable(sigs_[size_t(adm.everBorrow)]))) {
                pending_.push_back({ri, PendingKind::Unsatisfiable, 0, 0, false, sig});
                requeue(ri, false);
                continue;
            }
            Try t = attempt(ri, sig, false);
            if (t != Try::Started && pools_ && adm.borrow >= 0) {
                // Its pool is full (or held for the head): idle GPUs of a lending pool.
                const Try b = attempt(ri, adm.borrow, true);
                if (b == Try::Started || t == Try::NoFit)
                    t = b;
            }
            if (t == Try::Started) {
                started = true;
            } else if (t == Try::Held) {
                pending_.push_back({ri, PendingKind::BackfillHeld, runs_[size_t(head_)].id, shadowTime_});
            } else if (pools_ && adm.quota >= 0 && fitsIgnoringQuota(ri)) {
                // Named no pool, and only the nodes its quota keeps it off have room.
                pending_.push_back({ri, PendingKind::PoolQuota, 0, qint64(adm.quota)});
            } else {
                PendingOut po{ri, PendingKind::WaitingForResources, 0, 0, false, sig};
                if (head_ < 0) {
                    head_ = ri;
                    po.isHead = true;
                    computeReservation(sig);
                    if (p_.backfill)
                        reservationActive_ = true; // shadowTime_ == kNever: nothing can delay it
                    else
                        strictBlocked_ = true;
                }
                pending_.push_back(po);
            }
        }
        requeue(ri, started);
    }

    SchedulerDecision d;
    emitPlacements(d);
    d.pending.reserve(qsizetype(pending_.size()));
    int position = 0;
    for (const PendingOut& po : pending_) {
        const RunRt& r = runs_[size_t(po.run)];
        PendingInfo info;
        info.run = r.id;
        info.position = ++position;
        info.reason.kind = po.kind;
        info.reason.ordering = p_.ordering;
        info.reason.otherRun = po.other;
        info.reason.atMs = po.at;
        switch (po.kind) {
        case PendingKind::SweepCap: {
            const PendingRun& pr = q_[r.q];
            info.reason.sweepId = pr.sweepId;
            info.reason.sweepName = pr.sweepName;
            info.reason.sweepCap = r.cap;
            info.reason.sweepRunning = sweepRunning_[size_t(r.sweep)];
            break;
        }
        case PendingKind::WaitingForResources:
        case PendingKind::Unsatisfiable: {
            const PendingRun& pr = q_[r.q];
            buildReason(sigs_[size_t(po.sig >= 0 ? po.sig : r.sig)], info.reason);
            info.reason.gpuMemoryMiB = pr.gpuMemoryMiB;
            info.reason.gpuType = pr.gpuTypeRegex;
            break;
        }
        case PendingKind::PoolQuota: {
            const QuotaBlock& b = quotaBlocks_[size_t(po.at)];
            info.reason.atMs = 0;
            info.reason.quotaProject = b.project;
            info.reason.quotaAccount = b.account;
            info.reason.pool = b.pool;
            info.reason.quotaUsed = b.used;
            info.reason.quotaLimit = b.limit;
            info.reason.quotaNeed = b.need;
            break;
        }
        case PendingKind::NoSuchPool:
            info.reason.pool = q_[r.q].pool;
            for (const ResourcePool& pool : p_.pools)
                info.reason.pools << pool.name;
            break;
        case PendingKind::EmptyPool:
            info.reason.pool = q_[r.q].pool;
            info.reason.pools = p_.pools[r.pool].labels;
            break;
        default: break;
        }
        if (po.isHead && shadowTime_ != kNever)
            info.estimatedStartMs = shadowTime_;
        if (po.kind == PendingKind::BackfillHeld || info.estimatedStartMs) {
            info.reason.assumesDefaultRuntime = assumedDefault_;
            info.reason.defaultRuntimeMs = p_.defaultRuntimeMs;
        }
        d.pending << info;
    }
    if (head_ >= 0 && shadowTime_ != kNever) {
        Reservation res;
        res.run = runs_[size_t(head_)].id;
        res.startMs = shadowTime_;
        for (const Part& part : reservedParts_) {
            const NodeRt& rt = nodes_[size_t(part.node)];
            res.nodes << makeAssignment(c_.nodes[rt.orig], gpus_, rt, part);
        }
        d.reservation = res;
    }
    return d;
}

} // namespace

SchedulerDecision schedule(const ClusterState& state, const QList<PendingRun>& queue, const Policy& policy,
        qint64 nowMs, const FairShareState& fairShare)
{
    const detail::NodeLayout layout(state.nodes);
    Pass pass(layout, state, queue, policy, nowMs, fairShare);
    return pass.run();
}

Scheduler::Scheduler() = default;
Scheduler::~Scheduler() = default;
Scheduler::Scheduler(Scheduler&&) noexcept = default;
Scheduler& Scheduler::operator=(Scheduler&&) noexcept = default;

SchedulerDecision Scheduler::schedule(const ClusterState& state, const QList<PendingRun>& queue, const Policy& policy,
        qint64 nowMs, const FairShareState& fairShare)
{
    if (!m_layout || !m_layout->matches(state.nodes)) {
        m_layout = std::make_unique<detail::NodeLayout>(state.nodes);
        ++m_layoutBuilds;
    }
    Pass pass(*m_layout, state, queue, policy, nowMs, fairShare);
    return pass.run();
}

ClusterState applyDecision(
        ClusterState state, const SchedulerDecision& decision, const QList<PendingRun>& queue, qint64 nowMs)
{
    QHash<RunId, qsizetype> byId;
    byId.reserve(queue.size());
    for (qsizetype i = 0; i < queue.size(); ++i)
        byId.insert(queue[i].id, i);
    for (const RunPlacement& pl : decision.placements) {
        RunningAllocation a;
        a.run = pl.run;
        a.startMs = nowMs;
        a.estimatedEndMs = pl.expectedEndMs;
        const auto it = byId.constFind(pl.run);
        if (it != byId.constEnd()) {
            const PendingRun& r = queue[it.value()];
            a.user = r.user;
            a.project = r.project;
            a.pool = r.pool;
            a.sweepId = r.sweepId;
            a.timeLimitMs = r.timeLimitMs;
        }
        for (const NodeAssignment& na : pl.nodes)
            a.nodes << NodeShare{na.node, na.gpuIndices, na.cpus, na.memoryMiB, na.port};
        state.running << a;
    }
    return state;
}

} // namespace ty::sched
