#pragma once

#include "ArtifactRecord.h"
#include "MemoRecord.h"
#include "NodeRecord.h"
#include "PipelineRecord.h"
#include "RunNotice.h"
#include "core/common/Result.h"
#include "core/common/Run.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <future>
#include <memory>
#include <variant>

namespace ty::storeop {

// The writes a ResultStore queues to its writer thread, in call order.

struct CreateRun {
    RunRecord run;
    QMap<QString, QString> params;
    std::shared_ptr<std::promise<Result<RunId>>> done; // set after the commit (or the failure)
};

struct UpdateRun {
    RunRecord run;
};

// Only the fields of `annotation` that are set; nothing else of the run.
struct AnnotateRun {
    RunId run = 0;
    RunAnnotation annotation;
};

struct AppendMetrics {
    QList<MetricPoint> points;
};

struct SetConsoleOffset {
    RunId run = 0;
    qint64 offset = 0;
};

struct DeleteRun {
    RunId run = 0;
};

struct AddArtifact {
    ArtifactRecord artifact;
};

struct AddNotice {
    RunNotice notice;
};

// Sets params of an existing run (inserted, or replacing the same names).
struct SetParams {
    RunId run = 0;
    QMap<QString, QString> params;
};

// Inserts or replaces the node of that name.
struct PutNode {
    NodeRecord node;
};

struct RemoveNode {
    QString name;
};

// Replaces an existing node's facts (NodeRecord::facts); nothing for an unknown name.
struct SetNodeFacts {
    QString name;
    QString facts;
};

// Replaces the labels of node `name`: a stored node's, or for "local" the
// meta table's 'local_node_labels'. Nothing for an unknown stored name
// (ResultStore::setNodeLabels checks first).
struct SetNodeLabels {
    QString name;
    QStringList labels;
};

// The run's ingestion (re)starts from its stored offset
// (ResultStore::beginIngestion).
struct BeginIngestion {
    RunId run = 0;
};

// Inserts the memo entry, or replaces the one of that key whole (its earlier
// hits go with it).
struct PutMemoEntry {
    MemoEntryRecord entry;
};

// Counts a hit on an existing entry (hit_count + 1, last_hit_at) and records
// it in memo_hits; nothing for an unknown key.
struct RecordMemoHit {
    MemoHitRecord hit;
};

// Removes the entries of these keys, with their hits; unknown keys are skipped.
struct RemoveMemoEntries {
    QStringList keys;
};

// Inserts the pipeline, or replaces the one of that id whole.
struct PutPipeline {
    PipelineRecord pipeline;
};

// Inserts a run group; `done` gets its id (a RunGroupId, the same integer
// type as a RunId) after the commit, or the failure.
struct CreateGroup {
    RunGroupRecord group;
    std::shared_ptr<std::promise<Result<RunId>>> done;
};

// Makes the run a member of the group (or changes its position and role there).
struct JoinGroup {
    RunId run = 0;
    RunGroupMembership membership;
};

using WriteOp = std::variant<CreateRun, UpdateRun, AnnotateRun, AppendMetrics, SetConsoleOffset, DeleteRun, AddArtifact,
        AddNotice, SetParams, PutNode, RemoveNode, SetNodeFacts, SetNodeLabels, BeginIngestion, PutMemoEntry,
        RecordMemoHit, RemoveMemoEntries, PutPipeline, CreateGroup, JoinGroup>;

} // namespace ty::storeop
