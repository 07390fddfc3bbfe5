#include "MetricFileImporter.h"

#include "CsvMetricsReader.h"
#include "JsonLinesReader.h"
#include "TensorBoardEventReader.h"
#include "TrainerStateImporter.h"

#include <QFile>
#include <QFileInfo>

namespace ty {

QString metricFileFormatName(MetricFileFormat f)
{
    switch (f) {
    case MetricFileFormat::Csv: return QStringLiteral("CSV");
    case MetricFileFormat::TensorBoard: return QStringLiteral("TensorBoard event file");
    case MetricFileFormat::TrainerState: return QStringLiteral("Hugging Face trainer_state.json");
    case MetricFileFormat::JsonLines: return QStringLiteral("JSON lines");
    case MetricFileFormat::Unknown: break;
    }
    return QStringLiteral("unknown");
}

MetricFileFormat detectMetricFileFormat(const QString& path, QByteArrayView head)
{
    const QString name = QFileInfo(path).fileName();
    const QString lower = name.toLower();
    if (lower.contains(QLatin1StringView("tfevents")))
        return MetricFileFormat::TensorBoard;
    if (lower == QLatin1StringView("trainer_state.json"))
        return MetricFileFormat::TrainerState;
    if (lower.endsWith(QLatin1StringView(".jsonl")) || lower.endsWith(QLatin1StringView(".ndjson"))
            || lower.endsWith(QLatin1StringView(".json")))
        return MetricFileFormat::JsonLines;
    if (lower.endsWith(QLatin1StringView(".csv")))
        return MetricFileFormat::Csv;
    const QByteArrayView t = head.trimmed();
    if (t.startsWith('{'))
        return MetricFileFormat::JsonLines;
    return MetricFileFormat::Unknown;
}

std::unique_ptr<MetricStreamReader> createMetricStreamReader(MetricFileFormat format, const QString& origin)
{
    switch (format) {
    case MetricFileFormat::Csv: return std::make_unique<CsvMetricsReader>(origin);
    case MetricFileFormat::TensorBoard: return std::make_unique<TensorBoardEventReader>(origin);
    case MetricFileFormat::JsonLines: return std::make_unique<JsonLinesReader>(origin);
    case MetricFileFormat::TrainerState:
    case MetricFileFormat::Unknown: break;
    }
    return nullptr;
}

Result<MetricFileImport> importMetricFile(const QString& path, MetricFileFormat format)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot open: %2").arg(path, file.errorString()));
    if (format == MetricFileFormat::Unknown)
        format = detectMetricFileFormat(path, file.peek(256));
    MetricFileImport out;
    out.format = format;
    if (format == MetricFileFormat::Unknown)
        return fail(QStringLiteral("%1: unknown metric file format").arg(path));
    if (format == MetricFileFormat::TrainerState) {
        const QByteArray all = file.readAll();
        if (file.error() != QFileDevice::NoError)
            return fail(QStringLiteral("%1: read error: %2").arg(path, file.errorString()));
        Result<TrainerStateImport> r = importTrainerState(all, 0, path);
        if (!r)
            return fail(r.error().message);
        out.metrics = std::move(r->metrics);
        out.warnings = std::move(r->warnings);
        out.bytesRead = all.size();
        return out;
    }
    std::unique_ptr<MetricStreamReader> reader = createMetricStreamReader(format, path);
    while (!file.atEnd()) {
        const QByteArray chunk = file.read(1 << 20);
        if (chunk.isEmpty()) {
            if (file.error() != QFileDevice::NoError)
                return fail(QStringLiteral("%1: read error at byte %2: %3")
                                    .arg(path)
                                    .arg(out.bytesRead)
                                    .arg(file.errorString()));
            break;
        }
        out.bytesRead += chunk.size();
        reader->feed(chunk);
        out.metrics.append(reader->takeMetrics());
        if (reader->hasError())
            break;
    }
    reader->finish();
    out.metrics.append(reader->takeMetrics());
    out.error = reader->error();
    out.errorOffset = reader->errorOffset();
    out.warnings = reader->warnings();
    out.params = reader->params();
    if (reader->warningCount() > reader->warnings().size())
        out.warnings.append(QStringLiteral("%1: %2 more warnings")
                                    .arg(path)
                                    .arg(reader->warningCount() - reader->warnings().size()));
    return out;
}

} // namespace ty
