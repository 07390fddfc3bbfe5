#include "core/common/TerminalEchoGuard.h"

#include <QTest>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

using namespace ty;

// A real pseudo-terminal and a real child process that waits at a "prompt"
// with the guard, as trainyardctl does when it asks for a key's passphrase.
class TestTerminalEchoGuard final : public QObject {
    Q_OBJECT

    struct Pty {
        int master = -1;
        int slave = -1;
        ~Pty()
        {
            if (slave >= 0)
                ::close(slave);
            if (master >= 0)
                ::close(master);
        }
    };

    static bool openPty(Pty& p)
    {
        p.master = ::posix_openpt(O_RDWR | O_NOCTTY);
        if (p.master < 0 || ::grantpt(p.master) != 0 || ::unlockpt(p.master) != 0)
            return false;
        p.slave = ::open(::ptsname(p.master), O_RDWR | O_NOCTTY);
        return p.slave >= 0;
    }

    static bool echoOn(int fd)
    {
        termios t{};
        return ::tcgetattr(fd, &t) == 0 && (t.c_lflag & ECHO);
    }

    // Forks a child that holds a guard on the slave and waits; sends `sig`
    // once the child says echo is off. Returns the child's wait status.
    static int promptInterruptedBy(const Pty& p, int sig, bool* echoOffWhileAsking)
    {
        int ready[2];
        if (::pipe(ready) != 0)
            return -1;
        const pid_t child = ::fork();
        if (child == 0) {
            ::close(ready[0]);
            TerminalEchoGuard guard(p.slave);
            const char c = guard.active() ? '1' : '0';
            (void)!::write(ready[1], &c, 1);
            char buf[64];
            (void)!::read(p.slave, buf, sizeof buf); // the passphrase that never comes
            ::_exit(3);
        }
        ::close(ready[1]);
        char c = 0;
        (void)!::read(ready[0], &c, 1);
        ::close(ready[0]);
        *echoOffWhileAsking = c == '1' && !echoOn(p.slave);
        ::kill(child, sig);
        int status = 0;
        ::waitpid(child, &status, 0);
        return status;
    }

private Q_SLOTS:
    void ctrlCAtThePromptRestoresEcho()
    {
        Pty p;
        QVERIFY(openPty(p));
        QVERIFY(echoOn(p.slave));
        bool off = false;
        const int status = promptInterruptedBy(p, SIGINT, &off);
        QVERIFY(off);
        // It ended as SIGINT ends it without the guard, and echo is back.
        QVERIFY(WIFSIGNALED(status));
        QCOMPARE(WTERMSIG(status), SIGINT);
        QVERIFY(echoOn(p.slave));
    }

    void sigtermAtThePromptRestoresEcho()
    {
        Pty p;
        QVERIFY(openPty(p));
        bool off = false;
        const int status = promptInterruptedBy(p, SIGTERM, &off);
        QVERIFY(off);
        QVERIFY(WIFSIGNALED(status));
        QCOMPARE(WTERMSIG(status), SIGTERM);
        QVERIFY(echoOn(p.slave));
    }

    void answeredPromptRestoresEchoAndHandlers()
    {
        Pty p;
        QVERIFY(openPty(p));
        struct sigaction before { };
        QCOMPARE(::sigaction(SIGINT, nullptr, &before), 0);
        {
            TerminalEchoGuard guard(p.slave);
            QVERIFY(guard.active());
            QVERIFY(!echoOn(p.slave));
        }
        QVERIFY(echoOn(p.slave));
        struct sigaction after { };
        QCOMPARE(::sigaction(SIGINT, nullptr, &after), 0);
        QCOMPARE(reinterpret_cast<void*>(after.sa_handler), reinterpret_cast<void*>(before.sa_handler));
    }

    void notATerminalChangesNothing()
    {
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        {
            TerminalEchoGuard guard(fds[0]);
            QVERIFY(!guard.active());
        }
        ::close(fds[0]);
        ::close(fds[1]);
    }
};

QTEST_GUILESS_MAIN(TestTerminalEchoGuard)
#include "TestTerminalEchoGuard.moc"
