#pragma once

#include <QWidget>

class QLabel;
class QSlider;

namespace ty {

// The smoothing weight of a panel of charts (Smoothing.h, TensorBoard's
// debiased EMA): a slider in steps of 0.001 from 0 to 0.999 and a label with
// the weight. weightChanged() follows every change, from the slider or from
// setWeight(), synchronously; setting the weight it has emits nothing.
// The slider carries `sliderName` as its objectName (for tests).
// GUI thread only.
class SmoothingControl final : public QWidget {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SmoothingControl)

public:
    explicit SmoothingControl(const QString& sliderName, QWidget* parent = nullptr);

    double weight() const;
    // Clamped to [0, 0.999] and rounded to 0.001.
    void setWeight(double weight);

Q_SIGNALS:
    void weightChanged(double weight);

private:
    QSlider* m_slider = nullptr;
    QLabel* m_label = nullptr;
};

} // namespace ty
