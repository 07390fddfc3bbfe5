// The built-in width table must agree with the running libc's wcwidth() in a
// UTF-8 locale (what tmux uses on Debian), for every Unicode scalar value.
#include "core/logs/CharWidth.h"

#include <QTest>

#include <clocale>
#include <cwchar>

class TestCharWidth : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void knownValues()
    {
        QCOMPARE(ty::charWidth(U'a'), 1);
        QCOMPARE(ty::charWidth(U'\u2588'), 1);     // full block (tqdm)
        QCOMPARE(ty::charWidth(U'\u2501'), 1);     // heavy horizontal (rich)
        QCOMPARE(ty::charWidth(U'\u4e2d'), 2);     // CJK
        QCOMPARE(ty::charWidth(U'\U0001F4A1'), 2); // light bulb emoji (Lightning's tips)
        QCOMPARE(ty::charWidth(U'\u0301'), 0);     // combining acute
        QCOMPARE(ty::charWidth(U'\u200b'), 0);     // zero width space
        QCOMPARE(ty::charWidth(U'\x1b'), -1);
        QCOMPARE(ty::charWidth(U'\u0085'), -1);
    }

    void matchesLibc()
    {
        if (!std::setlocale(LC_CTYPE, "C.UTF-8"))
            QSKIP("no C.UTF-8 locale");
        int mismatches = 0;
        QString first;
        for (char32_t c = 0xA0; c < 0x110000; ++c) {
            if (c >= 0xD800 && c < 0xE000)
                continue;
            const int libc = ::wcwidth(wchar_t(c));
            if (libc < 0)
                continue; // unassigned / non-printable: the renderer shows them with width 1
            if (libc != ty::charWidth(c)) {
                if (mismatches++ == 0)
                    first = QString::number(uint(c), 16) + QStringLiteral(": libc ") + QString::number(libc)
                            + QStringLiteral(" table ") + QString::number(ty::charWidth(c));
            }
        }
        std::setlocale(LC_CTYPE, "C");
        QVERIFY2(mismatches == 0,
                qPrintable(QString::number(mismatches) + QStringLiteral(" mismatches, first ") + first));
    }
};

QTEST_GUILESS_MAIN(TestCharWidth)
#include "TestCharWidth.moc"
