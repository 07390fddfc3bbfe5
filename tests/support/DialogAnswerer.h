#pragma once

// Answers modal dialogs of type Dialog as a user would, for GUI tests: every
// 20 ms each visible top-level Dialog is handed to `answer` (which fills it
// and accepts or rejects it) and counted in `answered`. Header-only, for
// tests that link Qt Widgets. GUI thread.

#include <QApplication>
#include <QTimer>
#include <QWidget>

#include <functional>

namespace ty::test {

template <class Dialog> struct DialogAnswerer {
    std::function<void(Dialog&)> answer; // must accept() or reject() the dialog
    int answered = 0;
    QTimer timer;

    DialogAnswerer()
    {
        timer.setInterval(20);
        QObject::connect(&timer, &QTimer::timeout, [this] {
            for (QWidget* w : QApplication::topLevelWidgets()) {
                auto* dialog = qobject_cast<Dialog*>(w);
                if (!dialog || !dialog->isVisible() || !answer)
                    continue;
                ++answered;
                answer(*dialog);
            }
        });
        timer.start();
    }
};

} // namespace ty::test
