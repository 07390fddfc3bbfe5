#pragma once

#include "core/common/Run.h"
#include "ui/pipelines/PipelineGraphLayout.h"

#include <QHash>
#include <QJsonObject>
#include <QWidget>

namespace ty {

// A pipeline drawn as its graph of steps (PipelineGraphLayout): one box per
// step instance, filled with a tint of its state's colour and outlined in
// it, naming the instance, its state and run, and how long the run took
// (setDurations); edges from each upstream step to the steps that wait for
// it. A box's tooltip adds why it was skipped, failed or cached (a cached
// step: the run it reused and the key). Double-clicking a box whose step
// ran emits runActivated with its run.
//
// Sizes in device-independent pixels: boxes kBoxWidth x kBoxHeight, kGapX
// between columns, kGapY between rows, kMargin around. GUI thread only.
class PipelineGraph final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PipelineGraph)

public:
    static constexpr int kBoxWidth = 196, kBoxHeight = 46, kGapX = 48, kGapY = 14, kMargin = 12;

    explicit PipelineGraph(QWidget* parent = nullptr);

    // PROTOCOL.md's Pipeline object; an empty object clears the drawing.
    void setPipeline(const QJsonObject& pipeline);
    const QJsonObject& pipeline() const { return m_pipeline; }
    // run -> "12s", "3m 04s" (running: so far; RunsModel::formatDuration), shown in the boxes.
    void setDurations(const QHash<RunId, QString>& durations);
    const PipelineGraphLayout& graphLayout() const { return m_layout; }

    QRect boxRect(int box) const;
    int boxAt(const QPoint& pos) const; // -1: none
    QString toolTipFor(int box) const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

Q_SIGNALS:
    void runActivated(ty::RunId run);

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;

private:
    QJsonObject m_pipeline;
    PipelineGraphLayout m_layout;
    QHash<RunId, QString> m_durations;
};

// The colour a step state is drawn in (the outline; the fill is a tint).
QColor stepStateColour(const QString& state);

} // namespace ty
