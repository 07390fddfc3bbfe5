#include "CheckpointMirror.h"

#include "core/common/Paths.h"
#include "core/retry/Checkpoints.h"
#include "core/spec/JobSpec.h"
#include "core/store/ResultStore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QPointer>
#include <QSaveFile>

#include <algorithm>

namespace ty {

Q_DECLARE_LOGGING_CATEGORY(lcRetry) // RetryRunner.cpp: "trainyard.retry"

namespace {

const QString kManifest = QStringLiteral("copy.json");
const QString kCopyPrefix = QStringLiteral("copy-");

bool plainName(const QString& name)
{
    return !name.isEmpty() && name != u"." && name != u".." && !name.contains(u'/') && !name.contains(u'\\')
            && !name.contains(QChar(0));
}

// The attempt of `run`'s attempts group at `position`, 0 for none.
RunId attemptAt(const ResultStore& store, const RunRecord& run, int position)
{
    const auto m = membershipOf(run, RunGroupKind::Attempts);
    if (!m)
        return 0;
    for (const auto& [id, member] : store.groupMembers(m->group))
        if (member.position == position)
            return id;
    return 0;
}

} // namespace

QString checkpointSizeText(qint64 bytes)
{
    if (bytes < 1000)
        return QStringLiteral("%1 bytes").arg(bytes);
    if (bytes < 1000 * 1000)
        return QStringLiteral("%1 kB").arg(double(bytes) / 1e3, 0, 'f', 1);
    if (bytes < 1000LL * 1000 * 1000)
        return QStringLiteral("%1 MB").arg(double(bytes) / 1e6, 0, 'f', 1);
    return QStringLiteral("%1 GB").arg(double(bytes) / 1e9, 0, 'f', 1);
}

CheckpointFetchPlan planCheckpointFetch(const AgentFileList& list, const QString& checkpointDir,
        const std::optional<CheckpointCopy>& have, const QString& stagedName)
{
    CheckpointFetchPlan out;
    const CheckpointChoice choice = newestCompleteCheckpoint(list, checkpointDir);
    if (choice.name.isEmpty())
        return out;
    const QString dir = QDir::cleanPath(checkpointDir);
    if (!isSafeRelativePath(dir)) {
        out.refused = QStringLiteral("its checkpoint folder '%1' is not a relative path inside its workdir").arg(dir);
        return out;
    }
    if (!plainName(choice.name)) {
        out.refused = QStringLiteral("checkpoint name '%1' is not a plain name in %2").arg(choice.name, dir);
        return out;
    }
    if (list.truncated) {
        out.refused = QStringLiteral("the listing of %1 was cut short (the agent's entry limit): checkpoint %2 may "
                                     "be listed in part")
                              .arg(dir, choice.name);
        return out;
    }
    const QString prefix = dir + u'/' + choice.name;
    const QString markerPath = prefix + kCheckpointDoneSuffix;
    CheckpointFetch f;
    f.name = choice.name;
    f.nodePath = choice.path;
    f.files.workdir = list.workdir;
    f.files.runDir = list.runDir;
    std::optional<AgentFileEntry> marker;
    for (const AgentFileEntry& e : list.files) {
        if (e.root != QStringLiteral("workdir"))
            continue;
        if (e.path == markerPath) {
            marker = e;
            continue;
        }
        if (e.path != prefix && !e.path.startsWith(prefix + u'/'))
            continue;
        if (e.nameNotUtf8 || !isSafeRelativePath(e.path)) {
            out.refused = QStringLiteral("checkpoint %1 holds '%2', not a plain relative path: not copied")
                                  .arg(choice.name, e.path);
            return out;
        }
        if (e.type != QStringLiteral("file")) {
            out.refused = QStringLiteral("checkpoint %1 holds %2, a %3 (only regular files are copied): not copied")
                                  .arg(choice.name, e.path, e.type);
            return out;
        }
        f.files.files.append(e);
        f.bytes += e.size;
    }
    if (!marker || marker->type != QStringLiteral("file") || f.files.files.isEmpty()) {
        out.refused = QStringLiteral("checkpoint %1: its marker or its files are not regular files").arg(choice.name);
        return out;
    }
    if (have && have->name == choice.name && have->markerSize == marker->size
            && (have->markerMtimeMs == marker->mtimeMs
                    || (choice.name == stagedName && have->bytes == f.bytes + marker->size)))
        return out; // that one is here already (or it is the copy staged from here)
    std::sort(f.files.files.begin(), f.files.files.end(),
            [](const AgentFileEntry& a, const AgentFileEntry& b) { return a.path < b.path; });
    f.files.files.append(*marker);
    f.bytes += marker->size;
    f.markerMtimeMs = marker->mtimeMs;
    f.markerSize = marker->size;
    out.fetch = f;
    return out;
}

Result<void> verifyCheckpointCopy(const CheckpointFetch& fetch, const QString& localRoot)
{
    for (const AgentFileEntry& e : fetch.files.files) {
        const QFileInfo local(QDir(localRoot).filePath(e.path));
        if (local.isSymLink() || !local.isFile())
            return fail(QStringLiteral("%1 did not arrive (%2)")
                                .arg(e.path,
                                        local.isSymLink()        ? QStringLiteral("a symlink")
                                                : local.exists() ? QStringLiteral("not a regular file")
                                                                 : QStringLiteral("missing")));
        if (local.size() != e.size)
            return fail(QStringLiteral("%1 arrived with %2 of its %3 bytes").arg(e.path).arg(local.size()).arg(e.size));
    }
    return {};
}

Result<std::optional<CheckpointCopy>> readCheckpointCopy(const QString& dir)
{
    QFile file(QDir(dir).filePath(kManifest));
    if (!file.exists())
        return std::optional<CheckpointCopy>();
    if (!file.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString()));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (!doc.isObject())
        return fail(
                QStringLiteral("%1 is not a checkpoint copy's manifest: %2").arg(file.fileName(), error.errorString()));
    const QJsonObject o = doc.object();
    CheckpointCopy c;
    c.name = o.value(QStringLiteral("name")).toString();
    c.checkpointDir = o.value(QStringLiteral("checkpoint_dir")).toString();
    c.node = o.value(QStringLiteral("node")).toString();
    c.producer = o.value(QStringLiteral("producer")).toInteger();
    c.nodePath = o.value(QStringLiteral("node_path")).toString();
    c.markerMtimeMs = o.value(QStringLiteral("marker_mtime_ms")).toInteger();
    c.markerSize = o.value(QStringLiteral("marker_size")).toInteger();
    const QString copyDir = o.value(QStringLiteral("dir")).toString();
    if (!plainName(c.name) || !isSafeRelativePath(c.checkpointDir) || !plainName(copyDir)
            || !copyDir.startsWith(kCopyPrefix))
        return fail(QStringLiteral("%1 names an unsafe checkpoint, folder or copy").arg(file.fileName()));
    c.localRoot = QDir(dir).filePath(copyDir);
    for (const QJsonValue& v : o.value(QStringLiteral("files")).toArray()) {
        const QJsonObject f = v.toObject();
        CheckpointCopy::File entry{
                f.value(QStringLiteral("path")).toString(), f.value(QStringLiteral("size")).toInteger()};
        if (!isSafeRelativePath(entry.path) || !entry.path.startsWith(c.checkpointDir + u'/' + c.name))
            return fail(QStringLiteral("%1 names an unsafe path '%2'").arg(file.fileName(), entry.path));
        c.files.append(entry);
        c.bytes += entry.size;
    }
    if (c.files.isEmpty())
        return fail(QStringLiteral("%1 names no files").arg(file.fileName()));
    return std::optional<CheckpointCopy>(c);
}

CheckpointMirror::CheckpointMirror(
        RunEngine* engine, ResultStore* store, QString databasePath, Clock& clock, qint64 intervalMs, QObject* parent)
    : QObject(parent)
    , m_engine(engine)
    , m_store(store)
    , m_databasePath(std::move(databasePath))
    , m_clock(clock)
    , m_intervalMs(std::max<qint64>(1, intervalMs))
{
    m_access.list = [engine](const RunRecord& run, const QStringList& globs,
                            std::function<void(const Result<AgentFileList>&)> cb) {
        engine->listRunFiles(run, globs, std::move(cb));
    };
    m_access.download = [engine](const RunRecord& run, const AgentFileList& files, const QString& destDir,
                                std::function<void(const Result<ArtifactDownload>&)> cb) {
        engine->downloadRunFiles(run, files, destDir, std::move(cb));
    };
    connect(m_engine, &RunEngine::runStateChanged, this, &CheckpointMirror::onRunState);
    m_engine->setStageProvider([this](const RunRecord& run) { return stageSources(run); }, this);
    m_timer = m_clock.createTimer(this, [this] { tick(); });
    m_timer->setInterval(m_intervalMs);
    m_timer->start();
    for (const RunRecord& r : m_store->unfinishedRuns())
        if (r.state == RunState::Running)
            follow(r);
}

CheckpointMirror::~CheckpointMirror()
{
    m_engine->setStageProvider({}, this);
}

qint64 CheckpointMirror::intervalFromEnvironment()
{
    const QString text = qEnvironmentVariable("TRAINYARD_CHECKPOINT_COPY_INTERVAL");
    if (text.isEmpty())
        return kDefaultIntervalMs;
    const auto sec = parseDurationSec(text);
    if (!sec || *sec <= 0) {
        qCWarning(lcRetry).noquote() << QStringLiteral(
                "TRAINYARD_CHECKPOINT_COPY_INTERVAL='%1' is not a duration (30s, 5m): using 60s")
                                                .arg(text);
        return kDefaultIntervalMs;
    }
    return *sec * 1000;
}

RunId CheckpointMirror::lineageOf(const RunRecord& run) const
{
    const RunId first = attemptAt(*m_store, run, 1);
    return first ? first : run.id;
}

QString CheckpointMirror::copiesDir(RunId lineage) const
{
    return runDataDir(m_databasePath, lineage) + QStringLiteral("/checkpoint");
}

std::optional<CheckpointCopy> CheckpointMirror::copyOf(const RunRecord& run) const
{
    const auto copy = readCheckpointCopy(copiesDir(lineageOf(run)));
    if (!copy) {
        qCWarning(lcRetry).noquote() << QStringLiteral("run %1: %2").arg(run.id).arg(copy.error().message);
        return std::nullopt;
    }
    return *copy;
}

void CheckpointMirror::follow(const RunRecord& run)
{
    if (run.state != RunState::Running || run.env.value(kCheckpointDirVar).isEmpty() || run.node.isEmpty())
        return;
    const Result<JobSpec> spec = runSpecOf(run);
    if (!spec || !spec->retry)
        return;
    Followed& f = m_followed[run.id];
    f.run = run;
}

void CheckpointMirror::onRunState(const RunRecord& run)
{
    if (run.state == RunState::Running)
        follow(run);
    if (const auto staged = m_staged.constFind(run.id); staged != m_staged.cend() && run.state != RunState::Starting) {
        const CheckpointCopy copy = *staged;
        m_staged.erase(staged);
        const QString attempt = run.env.value(kAttemptVar);
        if (const auto f = m_followed.find(run.id); f != m_followed.end())
            f->stagedName = copy.name; // its listings show the staged copy with the staging's time
        if (run.state == RunState::Running || run.startedAt.isValid())
            m_store->addNotice(RunNotice{run.id, {},
                    QStringLiteral("checkpoint %1 copied from %2 (%3) to %4 before attempt %5")
                            .arg(copy.name, copy.node, checkpointSizeText(copy.bytes), run.node, attempt)});
        else if (run.state == RunState::Failed)
            m_store->addNotice(RunNotice{run.id, {},
                    QStringLiteral("attempt %1 was to resume from checkpoint %2 (written on %3 by run %4); its copy "
                                   "on this machine (%5) could not be copied to %6: the attempt failed rather than "
                                   "start from the beginning")
                            .arg(attempt, copy.name, copy.node)
                            .arg(copy.producer)
                            .arg(copy.localRoot, run.node)});
    }
    if (!isTerminal(run.state))
        return;
    const auto it = m_followed.find(run.id);
    if (it == m_followed.end())
        return;
    it->run = run;
    if (run.failureKind == FailureKind::NodeLost) { // its node does not answer: nothing to list there
        if (!it->inFlight)
            m_followed.erase(it);
        return;
    }
    // Once more at its end, if its node answers; then it is no longer followed.
    if (it->inFlight)
        it->again = true;
    else
        check(run.id);
}

void CheckpointMirror::tick()
{
    const QList<RunId> ids = m_followed.keys();
    for (RunId id : ids)
        if (const auto it = m_followed.constFind(id); it != m_followed.cend() && !it->inFlight)
            check(id);
}

void CheckpointMirror::done(RunId id)
{
    --m_busy;
    const auto it = m_followed.find(id);
    if (it != m_followed.end()) {
        it->inFlight = false;
        if (it->again) {
            it->again = false;
            check(id);
        } else if (isTerminal(it->run.state)) {
            m_followed.erase(it);
        }
    }
    Q_EMIT checked(id);
}

void CheckpointMirror::check(RunId id)
{
    auto it = m_followed.find(id);
    if (it == m_followed.end() || it->inFlight)
        return;
    it->inFlight = true;
    ++m_busy;
    const RunRecord run = it->run;
    const QString dir = run.env.value(kCheckpointDirVar);
    m_access.list(run, checkpointGlobs(dir),
            [this, alive = QPointer<CheckpointMirror>(this), id, run, dir](const Result<AgentFileList>& list) {
                if (!alive)
                    return; // the engine answers what was pending as it goes, after this
                if (!list) {
                    qCDebug(lcRetry).noquote()
                            << QStringLiteral("run %1: checkpoints not listed: %2").arg(id).arg(list.error().message);
                    done(id);
                    return;
                }
                const auto followed = m_followed.constFind(id);
                const CheckpointFetchPlan plan = planCheckpointFetch(
                        *list, dir, copyOf(run), followed != m_followed.cend() ? followed->stagedName : QString());
                if (!plan.refused.isEmpty())
                    qCWarning(lcRetry).noquote()
                            << QStringLiteral("run %1 on %2: %3").arg(id).arg(run.node, plan.refused);
                if (!plan.fetch) {
                    done(id);
                    return;
                }
                fetch(id, run, dir, *plan.fetch);
            });
}

void CheckpointMirror::fetch(RunId id, const RunRecord& run, const QString& dir, const CheckpointFetch& plan)
{
    // A new folder for the copy; the manifest names it once it is whole.
    const QString base = copiesDir(lineageOf(run));
    const auto current = readCheckpointCopy(base);
    int serial = 1;
    if (current && *current)
        serial = QFileInfo((*current)->localRoot).fileName().mid(kCopyPrefix.size()).toInt() + 1;
    const QString copyDir = QDir(base).filePath(kCopyPrefix + QString::number(serial));
    QDir(copyDir).removeRecursively();
    if (!QDir().mkpath(copyDir)) {
        qCWarning(lcRetry).noquote() << QStringLiteral("run %1: cannot create %2").arg(id).arg(copyDir);
        done(id);
        return;
    }
    m_access.download(run, plan.files, copyDir,
            [this, alive = QPointer<CheckpointMirror>(this), id, run, dir, plan, copyDir](
                    const Result<ArtifactDownload>& got) {
                if (!alive)
                    return;
                const auto drop = [this, id, run, plan, copyDir](const QString& why) {
                    qCWarning(lcRetry).noquote() << QStringLiteral("run %1: checkpoint %2 from %3 not kept: %4")
                                                            .arg(id)
                                                            .arg(plan.name, run.node, why);
                    QDir(copyDir).removeRecursively();
                    done(id);
                };
                if (!got)
                    return drop(got.error().message);
                if (!got->refused.isEmpty())
                    return drop(QStringLiteral("refused ") + got->refused.join(QStringLiteral("; ")));
                if (const auto whole = verifyCheckpointCopy(plan, copyDir); !whole)
                    return drop(whole.error().message);
                // Still the same checkpoint on the node (not rewritten under the copy)?
                m_access.list(run, checkpointGlobs(dir),
                        [this, alive, id, run, dir, plan, copyDir, drop](const Result<AgentFileList>& again) {
                            if (!alive)
                                return;
                            if (!again)
                                return drop(QStringLiteral("its node could not confirm it afterwards: ")
                                        + again.error().message);
                            bool same = false;
                            for (const AgentFileEntry& e : again->files)
                                if (e.root == QStringLiteral("workdir") && e.path == plan.files.files.constLast().path)
                                    same = e.type == QStringLiteral("file") && e.mtimeMs == plan.markerMtimeMs
                                            && e.size == plan.markerSize;
                            if (!same)
                                return drop(QStringLiteral("its marker changed or went while it was copied"));
                            if (const auto kept = commit(run, dir, plan, copyDir); !kept)
                                return drop(kept.error().message);
                            done(id);
                        });
            });
}

Result<void> CheckpointMirror::commit(
        const RunRecord& run, const QString& dir, const CheckpointFetch& plan, const QString& copyDir)
{
    const QString base = QFileInfo(copyDir).absolutePath();
    QJsonArray files;
    for (const AgentFileEntry& e : plan.files.files)
        files.append(QJsonObject{{QStringLiteral("path"), e.path}, {QStringLiteral("size"), e.size}});
    const QJsonObject o{{QStringLiteral("name"), plan.name}, {QStringLiteral("checkpoint_dir"), QDir::cleanPath(dir)},
            {QStringLiteral("node"), run.node}, {QStringLiteral("producer"), run.id},
            {QStringLiteral("node_path"), plan.nodePath}, {QStringLiteral("marker_mtime_ms"), plan.markerMtimeMs},
            {QStringLiteral("marker_size"), plan.markerSize}, {QStringLiteral("dir"), QFileInfo(copyDir).fileName()},
            {QStringLiteral("files"), files}};
    QSaveFile manifest(QDir(base).filePath(kManifest));
    if (!manifest.open(QIODevice::WriteOnly) || manifest.write(QJsonDocument(o).toJson(QJsonDocument::Compact)) < 0
            || !manifest.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(manifest.fileName(), manifest.errorString()));
    // Only the newest is kept: every other copy folder goes (an older copy,
    // or one a crash cut short).
    for (const QString& other : QDir(base).entryList({kCopyPrefix + u'*'}, QDir::Dirs | QDir::NoDotAndDotDot))
        if (other != QFileInfo(copyDir).fileName())
            QDir(QDir(base).filePath(other)).removeRecursively();
    qCInfo(lcRetry).noquote() << QStringLiteral("run %1: checkpoint %2 copied from %3 (%4) to %5")
                                         .arg(run.id)
                                         .arg(plan.name, run.node, checkpointSizeText(plan.bytes), copyDir);
    Q_EMIT copied(run.id, plan.name, plan.bytes);
    return {};
}

QList<RunEngine::StageSource> CheckpointMirror::stageSources(const RunRecord& run)
{
    const QString resume = run.env.value(kResumeFromVar);
    if (resume.isEmpty() || run.env.value(kCheckpointDirVar).isEmpty())
        return {};
    const auto attempt = membershipOf(run, RunGroupKind::Attempts);
    if (!attempt || attempt->position < 2)
        return {};
    const std::optional<CheckpointCopy> copy = copyOf(run);
    const bool ours = copy && copy->nodePath == resume; // the copy of the very checkpoint it resumes from
    // Where the checkpoint it resumes from was written: the copy's node, else
    // the ended attempt's (RetryRunner found it there).
    QString holder = ours ? copy->node : QString();
    if (!ours)
        if (const auto previous = m_store->run(attemptAt(*m_store, run, attempt->position - 1)))
            holder = previous->node;
    if (holder == run.node)
        return {}; // on the node that holds it: nothing to copy
    RunEngine::StageSource source;
    if (!ours) {
        source.error = QStringLiteral("attempt %1 was to resume from %2 on node %3, but it was placed on %4 and no "
                                      "complete copy of that checkpoint is on this machine (%5): not started from "
                                      "the beginning instead")
                               .arg(attempt->position)
                               .arg(resume, holder.isEmpty() ? QStringLiteral("(unknown)") : holder, run.node,
                                       copiesDir(lineageOf(run)));
        return {source};
    }
    for (const CheckpointCopy::File& f : copy->files) {
        const QFileInfo local(QDir(copy->localRoot).filePath(f.path));
        if (local.isSymLink() || !local.isFile() || local.size() != f.size) {
            source.error = QStringLiteral("attempt %1 was to resume from checkpoint %2 (written on %3), but its copy "
                                          "on this machine is not whole: %4 is %5: not started from the beginning "
                                          "instead")
                                   .arg(attempt->position)
                                   .arg(copy->name, copy->node, local.filePath(),
                                           local.exists() ? QStringLiteral("not the file that was copied")
                                                          : QStringLiteral("missing"));
            return {source};
        }
        source.files << f.path;
    }
    source.producer = copy->producer;
    source.localRoot = copy->localRoot;
    source.envPaths.insert(kResumeFromVar, copy->checkpointDir + u'/' + copy->name);
    m_staged.insert(run.id, *copy);
    return {source};
}

} // namespace ty
