// importTrainerState: a trainer_state.json as transformers' Trainer writes it
// (train, eval and summary entries, NaN loss), incremental re-import, errors.
#include "tests/support/TestSupport.h"
#include "core/logs/importers/TrainerStateImporter.h"

#include <QMap>
#include <QTest>

#include <cmath>

using namespace ty;

namespace {

// Shaped like TrainerState.save_to_json() output (json.dumps(indent=2, sort_keys=True)).
const QByteArray kState = R"({
  "best_global_step": 20,
  "best_metric": 0.6443,
  "best_model_checkpoint": "out/checkpoint-20",
  "epoch": 2.0,
  "eval_steps": 10,
  "global_step": 30,
  "is_hyper_param_search": false,
  "is_local_process_zero": true,
  "is_world_process_zero": true,
  "log_history": [
    {
      "epoch": 0.3333333333333333,
      "grad_norm": 4.126,
      "learning_rate": 4.5e-05,
      "loss": 0.6931,
      "step": 5
    },
    {
      "epoch": 0.6666666666666666,
      "grad_norm": NaN,
      "learning_rate": 4e-05,
      "loss": NaN,
      "step": 10
    },
    {
      "epoch": 0.6666666666666666,
      "eval_accuracy": 0.71,
      "eval_loss": 0.6443,
      "eval_runtime": 0.512,
      "eval_samples_per_second": 390.6,
      "eval_steps_per_second": 48.8,
      "step": 10
    },
    {
      "epoch": 2.0,
      "step": 30,
      "total_flos": 15789432576000.0,
      "train_loss": 0.5824,
      "train_runtime": 12.3,
      "train_samples_per_second": 48.7,
      "train_steps_per_second": 2.44
    }
  ],
  "logging_steps": 5,
  "max_steps": 30,
  "num_input_tokens_seen": 0,
  "num_train_epochs": 2,
  "save_steps": 10,
  "stateful_callbacks": {},
  "total_flos": 15789432576000.0,
  "train_batch_size": 8,
  "trial_name": null,
  "trial_params": null
}
)";

} // namespace

class TestTrainerStateImporter : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void realisticFile()
    {
        const Result<TrainerStateImport> r = importTrainerState(kState);
        QVERIFY2(r.has_value(), r ? "" : qPrintable(r.error().message));
        QCOMPARE(r->entries, 4);
        QVERIFY(r->warnings.isEmpty());
        QMap<QString, QList<ImportedMetric>> keys;
        for (const ImportedMetric& m : r->metrics)
            keys[m.key].append(m);
        QCOMPARE(keys.keys(),
                (QStringList{"eval_accuracy", "eval_loss", "eval_runtime", "eval_samples_per_second",
                        "eval_steps_per_second", "grad_norm", "learning_rate", "loss", "total_flos", "train_loss",
                        "train_runtime", "train_samples_per_second", "train_steps_per_second"}));
        QCOMPARE(r->metrics.size(), 3 + 3 + 5 + 5);
        QCOMPARE(keys["loss"].size(), 2);
        QCOMPARE(keys["loss"][0], (ImportedMetric{"loss", 5, 0.3333333333333333, 0.6931, std::nullopt}));
        QCOMPARE(keys["loss"][1].step, 10);
        QVERIFY(std::isnan(keys["loss"][1].value)); // a diverged loss survives
        QVERIFY(std::isnan(keys["grad_norm"][1].value));
        QCOMPARE(keys["eval_loss"][0], (ImportedMetric{"eval_loss", 10, 0.6666666666666666, 0.6443, std::nullopt}));
        QCOMPARE(keys["train_loss"][0], (ImportedMetric{"train_loss", 30, 2.0, 0.5824, std::nullopt}));
        QCOMPARE(keys["total_flos"][0].value, 15789432576000.0);
    }

    void incrementalReimport()
    {
        // The Trainer rewrote the file with one more entry: only that one comes back.
        QByteArray grown = kState;
        grown.replace("\n  ],\n  \"logging_steps\"",
                ",\n    {\"epoch\": 2.0, \"loss\": 0.41, \"step\": 35}\n  ],\n  \"logging_steps\"");
        QVERIFY(grown != kState);
        const Result<TrainerStateImport> r = importTrainerState(grown, 4);
        QVERIFY(r.has_value());
        QCOMPARE(r->entries, 5);
        QCOMPARE(r->metrics, (QList<ImportedMetric>{{"loss", 35, 2.0, 0.41, std::nullopt}}));
    }

    void badInput()
    {
        const Result<TrainerStateImport> notJson
                = importTrainerState("{\"log_history\": [", 0, QStringLiteral("/x/trainer_state.json"));
        QVERIFY(!notJson);
        QVERIFY2(notJson.error().message.startsWith(QLatin1String("/x/trainer_state.json: not valid JSON: byte 17")),
                qPrintable(notJson.error().message));
        QVERIFY(!importTrainerState("{\"global_step\": 3}"));
        QVERIFY(!importTrainerState("[]"));
        // Entries that are not objects or have a bad step are skipped with a warning; no step -> index.
        const Result<TrainerStateImport> r
                = importTrainerState(R"({"log_history": [1, {"step": "x", "loss": 1}, {"loss": 2}]})");
        QVERIFY(r.has_value());
        QCOMPARE(r->warnings.size(), 2);
        QVERIFY(r->warnings[0].contains(QLatin1String("log_history[0] skipped: not an object")));
        QVERIFY(r->warnings[1].contains(QLatin1String("log_history[1] skipped: step is not an integer")));
        QCOMPARE(r->metrics, (QList<ImportedMetric>{{"loss", 2, std::nullopt, 2.0, std::nullopt}}));
    }
};

QTEST_GUILESS_MAIN(TestTrainerStateImporter)
#include "TestTrainerStateImporter.moc"
