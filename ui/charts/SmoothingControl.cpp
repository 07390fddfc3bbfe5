#include "SmoothingControl.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>

#include <algorithm>
#include <cmath>

namespace ty {

SmoothingControl::SmoothingControl(const QString& sliderName, QWidget* parent)
    : QWidget(parent)
{
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setObjectName(sliderName);
    m_slider->setAccessibleName(tr("Smoothing"));
    m_slider->setRange(0, 999);
    m_slider->setFixedWidth(160);
    m_slider->setToolTip(tr("TensorBoard's debiased exponential moving average; raw values drawn faintly behind"));
    m_label = new QLabel(QStringLiteral("0.000"), this);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_slider);
    layout->addWidget(m_label);
    connect(m_slider, &QSlider::valueChanged, this, [this](int v) {
        m_label->setText(QString::number(v / 1000.0, 'f', 3));
        Q_EMIT weightChanged(v / 1000.0);
    });
}

double SmoothingControl::weight() const
{
    return m_slider->value() / 1000.0;
}

void SmoothingControl::setWeight(double weight)
{
    m_slider->setValue(int(std::lround(std::clamp(weight, 0.0, 0.999) * 1000)));
}

} // namespace ty
