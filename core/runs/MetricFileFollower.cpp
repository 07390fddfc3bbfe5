#include "MetricFileFollower.h"

#include "core/logs/importers/CsvMetricsReader.h"
#include "core/logs/importers/MetricFileImporter.h"
#include "core/logs/importers/TrainerStateImporter.h"
#include "core/nodes/AgentClient.h"
#include "core/store/ResultStore.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSaveFile>
#include <QTimer>

#include <algorithm>

Q_LOGGING_CATEGORY(lcMetricFiles, "trainyard.runs.metricfiles", QtWarningMsg)

namespace ty {

namespace {
constexpr qint64 kReadChunk = 256 * 1024;                           // the agent's read_file maximum
constexpr int kListEvery = 5;                                       // polls between two list_files requests
const QString kRunDirMetricsFile = QStringLiteral("metrics.jsonl"); // $TRAINYARD_METRICS_FILE in the run dir
} // namespace

struct MetricFileFollower::File {
    QString root; // "workdir" or "run_dir"
    QString path; // relative to root
    QString id;   // root + ':' + path
    MetricFileFormat format = MetricFileFormat::Unknown;
    std::unique_ptr<MetricStreamReader> reader; // null for TrainerState
    qint64 offset = 0;                          // bytes fed to the reader
    qint64 emitted = 0;                         // points the reader produced from the file's start
    qint64 size = -1, mtimeMs = -1;             // as last seen (trainer_state.json)
    QByteArray headerLine;                      // CSV: the header the reader parsed
    bool finished = false;                      // reader->finish() was called
    bool failed = false;                        // stopped at an error (reported once)
    QMap<QString, QString> params;              // the reader's params() as last stored
};

MetricFileFollower::MetricFileFollower(RunId run, QString agentRun, QStringList globs, QString dataDir,
        ResultStore* store, AgentClient* client, QObject* parent)
    : QObject(parent)
    , m_run(run)
    , m_agentRun(std::move(agentRun))
    , m_globs(std::move(globs))
    , m_dataDir(std::move(dataDir))
    , m_store(store)
    , m_client(client)
{
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &MetricFileFollower::poll);
    loadState();
}

MetricFileFollower::~MetricFileFollower()
{
    // Ended mid-poll (engine closing, node lost): what was queued is
    // committed, then counted on disk, so the next session stores no copy.
    if (m_dirty) {
        m_store->flush();
        saveState();
    }
}

void MetricFileFollower::start(int intervalMs)
{
    m_timer->start(intervalMs);
    QTimer::singleShot(0, this, &MetricFileFollower::poll);
}

void MetricFileFollower::finish(std::function<void()> done)
{
    m_timer->stop();
    m_final = true;
    m_done = std::move(done);
    if (!m_busy)
        poll();
    // else: endPoll() of the running poll starts the final one
}

QString MetricFileFollower::statePath() const
{
    return m_dataDir + QStringLiteral("/metric-files.json");
}

void MetricFileFollower::loadState()
{
    QFile f(statePath());
    if (!f.open(QIODevice::ReadOnly))
        return;
    const QJsonObject files = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("files")).toObject();
    for (auto it = files.begin(); it != files.end(); ++it) {
        const QJsonObject o = it.value().toObject();
        m_storedCounts.insert(it.key(), o.value(QStringLiteral("points")).toInteger());
        if (o.contains(QStringLiteral("entries")))
            m_trainerEntries.insert(it.key(), o.value(QStringLiteral("entries")).toInteger());
    }
}

void MetricFileFollower::saveState()
{
    QJsonObject files;
    for (auto it = m_storedCounts.cbegin(); it != m_storedCounts.cend(); ++it) {
        QJsonObject o{{QStringLiteral("points"), it.value()}};
        if (m_trainerEntries.contains(it.key()))
            o.insert(QStringLiteral("entries"), m_trainerEntries.value(it.key()));
        files.insert(it.key(), o);
    }
    QDir().mkpath(m_dataDir);
    QSaveFile out(statePath());
    if (!out.open(QIODevice::WriteOnly)
            || out.write(QJsonDocument(QJsonObject{{QStringLiteral("files"), files}}).toJson()) < 0 || !out.commit())
        qCWarning(lcMetricFiles) << "run" << m_run << ": cannot write" << statePath() << ":" << out.errorString();
}

void MetricFileFollower::poll()
{
    if (m_busy || !m_client || !m_client->isReady()) {
        if (m_final && !m_busy && m_done)
            std::exchange(m_done, {})(); // the node is gone: nothing more to read now
        return;
    }
    m_busy = true;
    m_finalPollStarted = m_final;
    m_pollPoints.clear();
    const bool list = m_final || m_files.isEmpty() || m_pollCount % kListEvery == 0;
    ++m_pollCount;
    if (!list) {
        afterList();
        return;
    }
    QStringList globs = m_globs;
    globs.append(kRunDirMetricsFile);
    QPointer<MetricFileFollower> self(this);
    m_client->listFiles(m_agentRun, globs, [self](const Result<AgentFileList>& list) {
        if (!self)
            return;
        if (!list) {
            qCDebug(lcMetricFiles) << "run" << self->m_run << ": list_files failed:" << list.error().message;
        } else {
            for (const AgentFileEntry& e : list->files) {
                if (e.type == u"other")
                    continue;
                // The run-dir root holds only $TRAINYARD_METRICS_FILE (it also
                // holds the console and the agent's own files).
                if (e.root == u"run_dir" && e.path != kRunDirMetricsFile)
                    continue;
                const QString id = e.root + u':' + e.path;
                if (self->m_files.contains(id))
                    continue;
                const MetricFileFormat format = detectMetricFileFormat(e.path);
                if (format == MetricFileFormat::Unknown) {
                    // Listed again on every poll: said once.
                    if (!self->m_unknownFormat.contains(id)) {
                        self->m_unknownFormat.insert(id);
                        qCWarning(lcMetricFiles) << "run" << self->m_run << ": metric file" << e.path
                                                 << "has no format known by its name; skipped";
                        self->m_store->addNotice(RunNotice{self->m_run, QDateTime::currentDateTimeUtc(),
                                QStringLiteral("metric file %1 has no format known by its name (*.csv, *tfevents*, "
                                               "trainer_state.json, *.jsonl, *.json); skipped")
                                        .arg(e.path)});
                    }
                    continue;
                }
                auto f = std::make_shared<File>();
                f->root = e.root;
                f->path = e.path;
                f->id = id;
                f->format = format;
                f->reader = createMetricStreamReader(format, e.path);
                self->m_files.insert(id, f);
            }
        }
        self->afterList();
    });
}

void MetricFileFollower::afterList()
{
    m_queue = m_files.values();
    std::sort(m_queue.begin(), m_queue.end(), [](const auto& a, const auto& b) { return a->id < b->id; });
    processNext();
}

void MetricFileFollower::processNext()
{
    if (m_queue.isEmpty()) {
        endPoll();
        return;
    }
    const std::shared_ptr<File> f = m_queue.takeFirst();
    if (f->failed || f->finished) {
        processNext();
        return;
    }
    if (f->format == MetricFileFormat::TrainerState)
        readWhole(f, {});
    else if (f->format == MetricFileFormat::Csv && !f->headerLine.isEmpty())
        checkHeader(f);
    else
        readMore(f);
}

void MetricFileFollower::fileDone()
{
    QTimer::singleShot(0, this, &MetricFileFollower::processNext);
}

void MetricFileFollower::restartFile(File& f)
{
    qCInfo(lcMetricFiles) << "run" << m_run << ":" << f.path << "was rewritten; reading it again from its start";
    f.reader = createMetricStreamReader(f.format, f.path);
    f.offset = 0;
    f.emitted = 0;
    f.headerLine.clear();
}

// Lightning's CSVLogger rewrites the file with a wider header when a new key
// appears: compare the first line before reading on.
void MetricFileFollower::checkHeader(const std::shared_ptr<File>& f)
{
    QPointer<MetricFileFollower> self(this);
    m_client->readFile(
            m_agentRun, f->root, f->path, 0, f->headerLine.size() + 1, [self, f](const Result<AgentFileChunk>& chunk) {
                if (!self)
                    return;
                if (chunk && chunk->data != f->headerLine + '\n' && chunk->data != f->headerLine + '\r')
                    self->restartFile(*f);
                self->readMore(f);
            });
}

void MetricFileFollower::readMore(const std::shared_ptr<File>& f)
{
    if (!m_client) {
        fileDone();
        return;
    }
    QPointer<MetricFileFollower> self(this);
    m_client->readFile(
            m_agentRun, f->root, f->path, f->offset, kReadChunk, [self, f](const Result<AgentFileChunk>& chunk) {
                if (!self)
                    return;
                if (!chunk) {
                    qCDebug(lcMetricFiles) << "run" << self->m_run << ":" << chunk.error().message;
                    self->fileDone();
                    return;
                }
                if (chunk->size < f->offset) {
                    self->restartFile(*f);
                    self->readMore(f);
                    return;
                }
                self->consume(f, chunk->data, chunk->size, chunk->mtimeMs);
                if (!f->failed && chunk->data.size() == kReadChunk && f->offset < chunk->size) {
                    self->readMore(f);
                    return;
                }
                if (self->m_finalPollStarted && !f->failed && f->reader) {
                    f->reader->finish();
                    f->finished = true;
                    self->consume(f, {}, chunk->size, chunk->mtimeMs);
                }
                self->fileDone();
            });
}

void MetricFileFollower::consume(const std::shared_ptr<File>& f, const QByteArray& bytes, qint64, qint64 mtimeMs)
{
    MetricStreamReader& r = *f->reader;
    if (!bytes.isEmpty()) {
        r.feed(bytes);
        f->offset += bytes.size();
    }
    if (f->format == MetricFileFormat::Csv && f->headerLine.isEmpty())
        f->headerLine = static_cast<CsvMetricsReader&>(r).headerLine();
    if (r.params() != f->params) { // TensorBoard hparams: the run's params
        f->params = r.params();
        m_store->setParams(m_run, f->params);
        m_dirty = true;
    }
    const QList<ImportedMetric> got = r.takeMetrics();
    const qint64 stored = m_storedCounts.value(f->id);
    const qint64 skip = std::clamp<qint64>(stored - f->emitted, 0, got.size());
    f->emitted += got.size();
    if (r.hasError() && !f->failed) {
        f->failed = true;
        qCWarning(lcMetricFiles) << "run" << m_run << ":" << r.error() << "(at byte" << r.errorOffset() << ")";
        m_store->addNotice(RunNotice{m_run, QDateTime::currentDateTimeUtc(),
                QStringLiteral("metric file %1: %2 (at byte %3); its later points are not read")
                        .arg(f->path, r.error())
                        .arg(r.errorOffset())});
    }
    if (skip == got.size())
        return;
    QList<MetricPoint> points
            = toMetricPoints(got.mid(skip), m_run, mtimeMs > 0 ? mtimeMs : QDateTime::currentMSecsSinceEpoch());
    m_storedCounts.insert(f->id, std::max(stored, f->emitted));
    store(*f, std::move(points));
}

void MetricFileFollower::readWhole(const std::shared_ptr<File>& f, QByteArray soFar)
{
    QPointer<MetricFileFollower> self(this);
    m_client->readFile(m_agentRun, f->root, f->path, soFar.size(), kReadChunk,
            [self, f, soFar = std::move(soFar)](const Result<AgentFileChunk>& chunk) mutable {
                if (!self)
                    return;
                if (!chunk) {
                    self->fileDone();
                    return;
                }
                if (soFar.isEmpty() && chunk->size == f->size && chunk->mtimeMs == f->mtimeMs) {
                    self->fileDone(); // unchanged since the last poll
                    return;
                }
                soFar.append(chunk->data);
                if (chunk->data.size() == kReadChunk && soFar.size() < chunk->size) {
                    self->readWhole(f, std::move(soFar));
                    return;
                }
                const qsizetype skip = qsizetype(self->m_trainerEntries.value(f->id));
                auto state = importTrainerState(soFar, skip, f->path);
                if (!state) {
                    // Being rewritten right now, most likely: read it again next poll.
                    qCDebug(lcMetricFiles) << "run" << self->m_run << ":" << state.error().message;
                    self->fileDone();
                    return;
                }
                f->size = chunk->size;
                f->mtimeMs = chunk->mtimeMs;
                self->m_trainerEntries.insert(f->id, state->entries);
                if (!state->metrics.isEmpty()) {
                    QList<MetricPoint> points = toMetricPoints(state->metrics, self->m_run, chunk->mtimeMs);
                    self->m_storedCounts[f->id] += points.size();
                    self->store(*f, std::move(points));
                } else {
                    self->m_dirty = true;
                }
                self->fileDone();
            });
}

void MetricFileFollower::store(File&, QList<MetricPoint> points)
{
    for (MetricPoint& p : points)
        p.source = MetricSource::File;
    m_store->appendMetrics(points);
    m_pollPoints.append(points);
    m_dirty = true;
}

void MetricFileFollower::endPoll()
{
    if (m_dirty) {
        // The count on disk must never run ahead of the committed points.
        if (auto flushed = m_store->flush(); !flushed)
            qCWarning(lcMetricFiles) << "run" << m_run << ":" << flushed.error().message;
        saveState();
        m_dirty = false;
    }
    if (!m_pollPoints.isEmpty())
        Q_EMIT pointsStored(m_run, std::exchange(m_pollPoints, {}));
    m_busy = false;
    if (m_final && !m_finalPollStarted) {
        poll(); // finish() came during a regular poll
        return;
    }
    if (m_finalPollStarted && m_done)
        std::exchange(m_done, {})();
}

} // namespace ty
