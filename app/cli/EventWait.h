#pragma once

#include <QCoreApplication>

namespace ty::cli {

// One wait of a command in the event loop, safe against the reply that comes
// before the wait begins: a callback may run synchronously (an engine that
// knows the answer at once), and QCoreApplication::exit() before exec() is
// lost, so exec() would wait for ever. done() records the code; exec()
// returns it at once when it came already, else runs the loop until it does.
// Main thread only.
class EventWait final {
public:
    void done(int code)
    {
        if (m_done)
            return;
        m_done = true;
        m_code = code;
        if (m_inLoop)
            QCoreApplication::exit(code);
    }
    int exec()
    {
        if (m_done)
            return m_code;
        m_inLoop = true;
        const int code = QCoreApplication::exec();
        m_inLoop = false;
        return m_done ? m_code : code;
    }
    bool isDone() const { return m_done; }

private:
    bool m_done = false;
    bool m_inLoop = false;
    int m_code = 0;
};

} // namespace ty::cli
