#pragma once

#include "core/common/Result.h"

#include <QByteArrayView>
#include <QList>
#include <QString>

#include <optional>
#include <utility>

namespace ty {

// A scalar found in one Summary.Value of an Event.
struct TfScalar {
    QString tag;
    double value = 0.0;
    // SummaryMetadata.plugin_data.plugin_name when the value carries metadata
    // (TensorFlow 2 writes it with a tag's first value only): "scalars" for
    // tf.summary.scalar tensors, empty for legacy simple_value summaries.
    QString pluginName;
};

// The parts of a tensorflow.Event (tensorflow/core/util/event.proto) that
// hold scalars. Proto3 defaults apply: an absent step is 0.
struct TfEvent {
    double wallTime = 0.0; // seconds since the Unix epoch
    qint64 step = 0;
    QList<TfScalar> scalars;
    // Tags of values that carry metadata naming a plugin other than "scalars"
    // (histograms, text, hparams, ...), whether or not they hold a value: a
    // caller remembers them, as later values of such a tag omit the metadata.
    QStringList nonScalarTags;
    // The hyperparameters of an hparams plugin `session_start_info` (what
    // Lightning's TensorBoardLogger.log_hyperparams and
    // torch.utils.tensorboard's add_hparams write), name -> value as text:
    // numbers in the shortest form that reads back the same double ("0.001",
    // "128"), strings as they are, booleans "true"/"false"; in the file's order.
    QList<std::pair<QString, QString>> hparams;
};

// Decodes one serialized Event by hand (protobuf wire format: varints,
// fixed64/fixed32, length-delimited; https://protobuf.dev/programming-guides/encoding/).
// Fields read:
//   Event{ wall_time=1 double, step=2 int64, summary=5 Summary }
//   Summary{ value=1 repeated Value }
//   Value{ tag=1 string, simple_value=2 float, tensor=8 TensorProto, metadata=9 SummaryMetadata }
//   SummaryMetadata{ plugin_data=1 PluginData{ plugin_name=1 string, content=2 bytes } }
//   hparams content (tensorboard/plugins/hparams/plugin_data.proto, api.proto):
//     HParamsPluginData{ session_start_info=3 SessionStartInfo{ hparams=1 map<string, Value> } }
//     map entry{ key=1 string, value=2 google.protobuf.Value{ number_value=2 double,
//                string_value=3 string, bool_value=4 bool } } (null, struct and list values are skipped)
//   TensorProto{ dtype=1 enum (DT_FLOAT=1, DT_DOUBLE=2), tensor_shape=2 TensorShapeProto{dim=2 Dim{size=1}},
//                tensor_content=4 bytes (little endian), float_val=5, double_val=6 (packed or not) }
// A scalar is a simple_value, or a DT_FLOAT/DT_DOUBLE tensor holding exactly
// one element (shape [] or all dims 1) in tensor_content or float_val/double_val.
// Every other field is skipped by wire type (unknown fields included).
// Errors: malformed wire data (a varint over 10 bytes, a length past the
// end, wire type 3/4/6/7), naming the byte offset inside the event.
Result<TfEvent> decodeTfEvent(QByteArrayView event);

} // namespace ty
