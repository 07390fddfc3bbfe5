// The GUI under a zh_CN locale (issue #28): the main window's menus and the
// submit and add-node dialogs show the Chinese translation (Trainyard's own
// strings and Qt's standard buttons), and no visible label, button, check box
// or menu action clips its translated text. Runs with LANG=zh_CN.UTF-8 and a
// real CJK font (fonts-wqy-microhei), so the widths are the glyphs' widths.
#include "tests/ui/UiTestSupport.h"
#include "ui/dialogs/AddNodeDialog.h"
#include "ui/dialogs/SubmitDialog.h"
#include "ui/i18n/Translations.h"
#include "ui/mainwindow/MainWindow.h"
#include "core/store/ResultStore.h"

#include "tests/support/TestSupport.h"

#include <QAbstractButton>
#include <QApplication>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocument>

using namespace ty;

namespace {

QString withoutAccelerator(QString text)
{
    text.remove(QRegularExpression(QStringLiteral("\\(&.\\)")));
    text.remove(u'&');
    return text;
}

// Every visible, non-wrapping plain-text label and every visible button and
// check box under `root` whose text is wider than the room it was given.
QStringList clipped(QWidget* root)
{
    QStringList out;
    for (QLabel* l : root->findChildren<QLabel*>()) {
        if (!l->isVisibleTo(root) || l->wordWrap() || l->text().isEmpty() || Qt::mightBeRichText(l->text()))
            continue;
        int widest = 0;
        for (const QString& line : l->text().split(u'\n'))
            widest = std::max(widest, l->fontMetrics().horizontalAdvance(withoutAccelerator(line)));
        if (widest > l->contentsRect().width())
            out << QStringLiteral("QLabel '%1': %2 > %3").arg(l->text()).arg(widest).arg(l->contentsRect().width());
    }
    for (QAbstractButton* b : root->findChildren<QAbstractButton*>()) {
        if (!b->isVisibleTo(root) || b->text().isEmpty())
            continue;
        if (!qobject_cast<QPushButton*>(b) && !qobject_cast<QCheckBox*>(b))
            continue;
        const int advance = b->fontMetrics().horizontalAdvance(withoutAccelerator(b->text()));
        // The text plus the frame or indicator the style draws: what sizeHint asks for.
        if (advance > b->width() || b->sizeHint().width() > b->width())
            out << QStringLiteral("%1 '%2': text %3, hint %4 > %5")
                            .arg(QString::fromLatin1(b->metaObject()->className()), b->text())
                            .arg(advance)
                            .arg(b->sizeHint().width())
                            .arg(b->width());
    }
    return out;
}

} // namespace

class TestTranslationZhCN : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QTemporaryDir m_settingsDir;
    std::unique_ptr<ResultStore> m_store;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        test::keepSettingsIn(m_settingsDir.path());
        // ctest sets LANG=zh_CN.UTF-8; the default locale is set too, so the
        // test means the same when started by hand.
        QCOMPARE(qEnvironmentVariable("LANG"), QStringLiteral("zh_CN.UTF-8"));
        QCOMPARE(QLocale::system().name(), QStringLiteral("zh_CN"));
        QLocale::setDefault(QLocale(QLocale::Chinese, QLocale::China));
        const InstalledTranslations installed = installTranslations(qApp, QLocale::system());
        QVERIFY2(installed.trainyard, "trainyard_zh_CN.qm is not embedded under :/i18n");
        QVERIFY2(installed.qt, "qtbase_zh_CN.qm not found (qt6-translations-l10n)");
        QVERIFY2(!QFontDatabase::families(QFontDatabase::SimplifiedChinese).isEmpty(),
                "no Simplified Chinese font (fonts-wqy-microhei): widths would be of boxes");
        auto store = ResultStore::open(m_dir.filePath(QStringLiteral("results.db")));
        QVERIFY2(store, store ? "" : qPrintable(store.error().message));
        m_store = std::move(*store);
    }

    void cleanupTestCase() { m_store.reset(); }

    void clipCheckSeesClippedText()
    {
        // The check below flags a label and a button too narrow for their
        // Chinese text, and passes them once they have room.
        QWidget box;
        auto* label = new QLabel(QStringLiteral("未找到"), &box);
        auto* button = new QPushButton(QStringLiteral("设置优先级(&P)…"), &box);
        label->setGeometry(0, 0, 12, 20);
        button->setGeometry(0, 30, 30, 30);
        box.resize(400, 100);
        box.show();
        QVERIFY(QTest::qWaitForWindowExposed(&box));
        QCOMPARE(clipped(&box).size(), 2);
        label->setGeometry(0, 0, label->sizeHint().width(), 20);
        button->setGeometry(0, 30, button->sizeHint().width(), 30);
        QVERIFY2(clipped(&box).isEmpty(), qPrintable(clipped(&box).join(u'\n')));
    }

    void mainWindowMenusAreChinese()
    {
        MainWindow window(m_store.get(), nullptr);
        window.resize(1400, 850);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTest::qWait(200);
        QStringList titles;
        for (QAction* a : window.menuBar()->actions())
            titles << a->text();
        for (const QString& expected : {QStringLiteral("文件(&F)"), QStringLiteral("运行(&R)"),
                     QStringLiteral("视图(&V)"), QStringLiteral("帮助(&H)")})
            QVERIFY2(titles.contains(expected), qPrintable(titles.join(u'|')));

        QStringList actions;
        for (QAction* m : window.menuBar()->actions()) {
            QMenu* menu = m->menu();
            QVERIFY(menu);
            menu->ensurePolished();
            const int room = menu->sizeHint().width();
            for (QAction* a : menu->actions()) {
                if (a->isSeparator() || !a->isVisible())
                    continue;
                actions << a->text();
                const int advance = menu->fontMetrics().horizontalAdvance(withoutAccelerator(a->text()));
                QVERIFY2(advance < room,
                        qPrintable(QStringLiteral("menu action '%1' %2 >= %3").arg(a->text()).arg(advance).arg(room)));
                QVERIFY2(!a->text().contains(QStringLiteral("Submit")) && !a->text().contains(QStringLiteral("Quit")),
                        qPrintable(a->text()));
            }
        }
        QVERIFY2(actions.contains(QStringLiteral("提交(&S)…")), qPrintable(actions.join(u'|')));
        QVERIFY2(actions.contains(QStringLiteral("退出(&Q)")), qPrintable(actions.join(u'|')));
        QVERIFY2(actions.contains(QStringLiteral("关于 Trainyard(&A)")), qPrintable(actions.join(u'|')));

        QVERIFY(window.findChildren<QAbstractButton*>().size() + window.findChildren<QLabel*>().size() > 5);
        const QStringList bad = clipped(&window);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(u'\n')));
    }

    void submitDialogIsChinese()
    {
        SubmitDialog dialog;
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QTest::qWait(100);
        QCOMPARE(dialog.windowTitle(), QStringLiteral("提交运行"));
        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        QCOMPARE(buttons->button(QDialogButtonBox::Ok)->text(), QStringLiteral("提交(&S)"));
        // Qt's own string, from qtbase_zh_CN.qm.
        QCOMPARE(buttons->button(QDialogButtonBox::Cancel)->text(), QStringLiteral("取消"));
        QStringList labels;
        for (QLabel* l : dialog.findChildren<QLabel*>())
            labels << l->text();
        QVERIFY2(labels.contains(QStringLiteral("命令(&C)：")), qPrintable(labels.join(u'|')));
        QVERIFY2(labels.contains(QStringLiteral("工作目录(&W)：")), qPrintable(labels.join(u'|')));
        const QStringList bad = clipped(&dialog);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(u'\n')));
    }

    void addNodeDialogIsChinese()
    {
        AddNodeDialog dialog;
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        QTest::qWait(100);
        QCOMPARE(dialog.windowTitle(), QStringLiteral("添加节点"));
        QStringList texts;
        for (QLabel* l : dialog.findChildren<QLabel*>())
            texts << l->text();
        for (QCheckBox* c : dialog.findChildren<QCheckBox*>())
            texts << c->text();
        QVERIFY2(texts.contains(QStringLiteral("主机(&H)：")), qPrintable(texts.join(u'|')));
        QVERIFY2(texts.contains(QStringLiteral("若主机尚不在 known_hosts 中，则接受其主机密钥")),
                qPrintable(texts.join(u'|')));
        const QStringList bad = clipped(&dialog);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(u'\n')));
    }
};

QTEST_MAIN(TestTranslationZhCN)
#include "TestTranslationZhCN.moc"
