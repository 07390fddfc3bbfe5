#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace ty {

// Where each step instance of a pipeline goes in the graph view: a layered
// drawing, left to right. A step's column is the length of the longest
// chain of steps it waits for (`upstream`), so every edge goes rightwards;
// within a column steps keep file order and a fan-out step's instances are
// consecutive rows. An upstream step that is not in the pipeline (an old
// document without `upstream`) is ignored; a cycle cannot occur (PipelineSpec
// refuses one) and would only put its steps in column 0.
//
// Input: PROTOCOL.md's Pipeline object (`steps` in file order, each with
// `name`, `step`, `state`, `run`, `reason`, `upstream`).
// Pure: no widgets; any thread.
struct PipelineGraphLayout {
    struct Box {
        QString name;  // the instance ("train", "shard[shard=2]")
        QString step;  // its step
        QString state; // waiting, running, succeeded, failed, skipped, cached, cancelled
        qint64 run = 0;
        QString reason;
        int column = 0;
        int row = 0; // within its column, from 0
    };
    QList<Box> boxes;                 // in the pipeline's step order
    QList<std::pair<int, int>> edges; // (upstream box, downstream box) indexes into boxes
    int columns = 0;
    int rows = 0; // the tallest column's

    static PipelineGraphLayout of(const QJsonObject& pipeline);
};

} // namespace ty
