#pragma once

#include "ImportedMetric.h"
#include "MetricStreamReader.h"
#include "core/common/Result.h"

#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>

namespace ty {

enum class MetricFileFormat {
    Unknown,
    Csv,          // Lightning CSVLogger metrics.csv, any CSV with a header row
    TensorBoard,  // events.out.tfevents.*
    TrainerState, // Hugging Face trainer_state.json
    JsonLines,    // *.jsonl / *.ndjson, trainyard.py's metrics.jsonl
};

QString metricFileFormatName(MetricFileFormat f);

// By file name: `*tfevents*` -> TensorBoard, `trainer_state.json` ->
// TrainerState, `*.jsonl` / `*.ndjson` / `*.json` -> JsonLines, `*.csv` -> Csv.
// For other names the first bytes decide (`head`, may be empty): a '{' ->
// JsonLines; otherwise Unknown.
MetricFileFormat detectMetricFileFormat(const QString& path, QByteArrayView head = {});

// A streaming reader for the format (Csv, TensorBoard, JsonLines); nullptr for
// TrainerState (whole-file, see importTrainerState) and Unknown.
std::unique_ptr<MetricStreamReader> createMetricStreamReader(MetricFileFormat format, const QString& origin);

struct MetricFileImport {
    MetricFileFormat format = MetricFileFormat::Unknown;
    QList<ImportedMetric> metrics;
    // Where reading stopped early (corrupt or truncated data): the message and
    // byte offset; empty/-1 when the whole file was read. The metrics before it
    // are in `metrics`.
    QString error;
    qint64 errorOffset = -1;
    QStringList warnings;          // units skipped without stopping
    QMap<QString, QString> params; // hyperparameters the file holds (MetricStreamReader::params)
    qint64 bytesRead = 0;
};

// Imports a whole metric file (reading it in 1 MiB pieces). Fails only when
// the file cannot be read, its format is unknown, or (TrainerState) it is not
// a trainer state at all; damage part-way is reported in MetricFileImport::error.
Result<MetricFileImport> importMetricFile(const QString& path, MetricFileFormat format = MetricFileFormat::Unknown);

} // namespace ty
