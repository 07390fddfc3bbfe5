#pragma once

#include <QHash>
#include <QList>
#include <QRegularExpression>
#include <QString>
#include <QStringView>

#include <optional>
#include <utility>

namespace ty {

// A job spec's own metric regex. Named groups: `value` (required), `key`
// (optional: overrides MetricRule::key), `step` (optional integer).
struct MetricRule {
    QString key;
    QRegularExpression regex;
};

struct ExtractedMetric {
    QString key; // one shared QString per key for the extractor's life (until reset()): compare by identity downstream
    qint64 step = 0;             // from the line, else the per-key counter (see MetricExtractor)
    bool stepFromLine = false;   // true when the line itself named the step
    std::optional<double> epoch; // the line's epoch, when it names one
    double value = 0;            // nan and +-inf are kept as such
    bool percent = false;        // the value was written as `95.3%` (value is 95.3)
    // The key interned by this extractor: 1, 2, ... in order of each key's
    // first appearance (setLastStep() counts), the same number for every
    // sample of the key and never another key's, also across reset(), for
    // the extractor's life. Another extractor numbers its keys from 1 too:
    // a handle means nothing without its extractor, and `key` stays the
    // truth (MetricPoint::keyHandle says how the store uses it).
    quint32 keyHandle = 0;

    // What was extracted; keyHandle, an interning detail, is not compared.
    friend bool operator==(const ExtractedMetric& a, const ExtractedMetric& b)
    {
        return a.key == b.key && a.step == b.step && a.stepFromLine == b.stepFromLine && a.epoch == b.epoch
                && a.value == b.value && a.percent == b.percent;
    }
};

// Recognises metric values in committed console lines (plain text, as
// TerminalRenderer produces them: no escape sequences, one row each).
//
// Recognisers, in order:
//  1. JSON object lines (`{"loss": 0.5, "step": 3}`; nested objects give
//     dotted keys `a.b`, except under params/hparams/config/args/...,
//     which hold hyperparameters, not metrics; numeric strings, NaN/Infinity accepted) and Python
//     dict lines whose numbers may be quoted (`{'loss': '0.6926', 'epoch':
//     '0.16'}`). The object may follow other text (a tqdm bar) but must end
//     the line.
//  2. Otherwise `key=value` and `key: value` pairs anywhere in the line
//     (`loss=0.5 acc=0.9`, Keras `Epoch 3/15 - loss: 0.31 - acc: 0.91`,
//     `Loss = 2.05, Accuracy = 0.76`, a tqdm bar's postfix `loss=2.21]`).
//  3. Otherwise, on a line that names a step or epoch in words (`step 10`,
//     `Epoch 3`), whitespace pairs: one or two words, then a number with a
//     fraction or exponent (`step 10 loss 0.1160`; `Epoch 3 | train loss
//     0.52 | val acc 0.81` gives `train_loss` and `val_acc`: two words are
//     joined with `_`, case kept). The number must end the line or be
//     followed by `| , ; -` or the next pair. An integer is never a value
//     here (`epoch 3 of 10`, `rank 0 of 2`, `ckpt 3` are prose), nor is a
//     number after three or more words (`the average loss was 0.5`).
//  4. The spec's own rules (MetricRule), on every line; a key they produce
//     replaces the built-in sample with the same key on that line.
//
// Ranks: a line (or part of a line) after a rank prefix -- `[rank 1]`,
// `[rank1]:` (torch 2.x), torchrun's `[default0]:` -- is rank 1's (0's):
// its keys become `loss[rank1]` (rankKey(); the charts draw the ranks of a
// key as lines of one chart) and each rank has its own step axis. A line
// that holds several prefixes (two processes' writes on one line) is cut
// at each and every part read for its own rank; a part whose end another
// process's write cut off cannot be told from a whole one.
//
// Values: C/Python float syntax (`1e-3`, `-.5`, `1_000`, `nan`, `inf`,
// `-inf`, `Infinity`), `tensor(0.53, device='cuda:0')`, `np.float32(0.1)`,
// `95.3%` (percent=true).
//
// Not metrics (noise rules):
//  - a value directly followed by anything but end of line, whitespace or one
//    of `,;|)]}` (so `2.82it/s`, `3.2s`, `12/100`, `10:11:12`, `2026-01-02`,
//    `1.2.3`, `file.py:21:` give nothing); a value followed by a space and a
//    word that is not the next `key=`/`key:` pair (`using: 0 TPU cores`);
//    after `key=value`, a space and a `(` remark are fine (`loss=0.6 (12.3
//    it/s)`);
//  - a percentage followed by `|` (a progress bar's own percentage);
//  - in the `key: value` form, a key that ends a phrase (`Modules in train
//    mode: 4`, `Total FLOPs: 0`): the key must start the line or follow one of
//    `- , ; | [ ( { : >` or a number, unless it is written as an identifier
//    (with `_`, `.` or `/`: `final val_accuracy: 0.95`);
//  - keys: must start with a letter or `_`, then letters, digits, `_ . / -`,
//    at most 64 characters, not ending in `. / -`, not a source file name
//    (`x.py`), and not one of the bookkeeping names below
//    (`version`, `v_num`, `pid`, `rank`, `local_rank`, `seed`, ...).
//
// Step and epoch: `step`, `global_step`, `iteration`, `iter` (as a pair or
// as `step 10`, `Step 3/100`) name the line's step; `epoch` (`epoch=2`,
// `Epoch 3/15`, `"epoch": 0.16`) names its epoch. These keys are not metrics
// themselves: the epoch is recorded as ExtractedMetric::epoch of every other
// sample on the same line (a line with only an epoch gives nothing). Without
// a step on the line, a sample takes the console's current step: the last
// step any earlier line named, whatever its keys (a tqdm bar's `loss=` in
// the digits example sits at the `step=45` of the epoch line before it, on
// the same axis as `train_loss`). Only while no line has named a step yet,
// a key counts its own samples 0, 1, 2, ... (a console that never names a
// step plots each key against its sample index; stepFromLine is false
// for both kinds). The step can go backwards when a later line names a
// smaller one (e.g. plain_torch.log's `loss`).
// Feed logical lines (TerminalRenderer width 0): a row soft-wrapped at a
// terminal width can split a pair.
//
// Not thread safe (keeps the per-key counters); one instance per run.
class MetricExtractor final {
public:
    explicit MetricExtractor(QList<MetricRule> customRules = {});

    QList<ExtractedMetric> extract(QStringView line);

    // Forgets the per-key step counters and the console's step (a new run).
    // Key handles given out so far are not given to other keys afterwards.
    void reset()
    {
        m_keys.clear();
        m_consoleStep.reset();
        m_rankStep.clear();
    }
    // Continues a key's counter after `step` (a run resumed in a later
    // session: its stored points already end at `step`).
    void setLastStep(const QString& key, qint64 step);

    // Parses one value in any accepted syntax; nullopt if it is not a number.
    static std::optional<double> parseValue(QStringView text);

    // The key of `key` as rank `rank` logged it: `loss[rank1]`. The charts
    // draw every rank of one key as lines of one chart (splitRankKey).
    static QString rankKey(const QString& key, int rank);
    // `loss[rank1]` -> {"loss", 1}; nullopt for a key without a rank.
    static std::optional<std::pair<QString, int>> splitRankKey(const QString& key);

private:
    struct RankMarker {
        int rank;
        qsizetype length; // of the marker, with its ':'
    };
    static std::optional<RankMarker> rankMarkerAt(QStringView line, qsizetype at);
    QList<ExtractedMetric> extractPart(QStringView line, int rank);
    struct Raw {
        QString key;
        double value;
        bool percent;
    };
    struct LineInfo {
        std::optional<qint64> step;
        std::optional<double> epoch;
    };

    bool extractObject(QStringView line, QList<Raw>& out, LineInfo& info) const;
    void extractWords(QStringView line, QList<Raw>& out, LineInfo& info) const;
    void extractPairs(QStringView line, QList<Raw>& out, LineInfo& info) const;
    void scanStepEpochWords(QStringView line, LineInfo& info) const;
    static bool isNoiseKey(QStringView key);
    // Handles a key/value found by any recogniser: step and epoch keys go to
    // info, noise keys are dropped, the rest are appended.
    static void accept(const QString& key, double value, bool percent, QList<Raw>& out, LineInfo& info);

    QList<MetricRule> m_rules;
    // Every key seen (or set) since reset(): its step counter and handle.
    // The one string lookup per sample; the key's QString and handle then
    // travel with the sample, so nothing downstream hashes the text again.
    struct KeyState {
        qint64 lastStep = 0;
        quint32 handle = 0;
    };
    QHash<QString, KeyState>::iterator internKey(const QString& key, qint64 step);
    QHash<QString, KeyState> m_keys;
    quint32 m_nextHandle = 1;                     // not reset(): a handle names one key for the extractor's life
    std::optional<qint64> m_consoleStep;          // the last step a line named
    QHash<int, std::optional<qint64>> m_rankStep; // the same per rank prefix
};

} // namespace ty
