// The agent's nvidia-smi CSV parser (app/agent/NvidiaSmiCsv.cpp) on real
// output captured from an H200 workstation (tests/data/gpu-workstation).

#include "app/agent/NvidiaSmiCsv.h"
#include "tests/support/TestSupport.h"

#include <QTest>

using namespace ty::agent;

namespace {

// The columns of query-gpu-noheader.csv / query-gpu-busy.csv, as captured.
const std::vector<std::string> kFixtureFields{
        "index", "uuid", "name", "memory.total", "memory.used", "utilization.gpu", "temperature.gpu", "power.draw"};

std::string fixture(const char* name)
{
    const QByteArray b = ty::test::readFixture(QStringLiteral("gpu-workstation/nvidia-smi/") + QLatin1StringView(name));
    return b.toStdString();
}

} // namespace

class TestNvidiaSmiCsv final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void idleNoHeader()
    {
        const std::string text = fixture("query-gpu-noheader.csv");
        QVERIFY(!text.empty());
        auto gpus = parseQueryGpuCsv(text, kFixtureFields);
        QVERIFY2(gpus.has_value(), gpus ? "" : gpus.error().c_str());
        QCOMPARE(gpus->size(), std::size_t(1));
        const GpuInfo& g = gpus->front();
        QCOMPARE(g.index, 0);
        QCOMPARE(g.uuid, std::string("GPU-6b59c291-17a4-483d-d540-ace2891dfe5f"));
        QCOMPARE(g.name, std::string("NVIDIA H200"));
        QCOMPARE(*g.memoryTotalMib, 143771.0);
        QCOMPARE(*g.memoryUsedMib, 0.0);
        QCOMPARE(*g.utilizationPct, 0.0);
        QCOMPARE(*g.temperatureC, 34.0);
        QCOMPARE(*g.powerW, 79.49);
        QVERIFY(g.pciBusId.empty()); // not asked in that capture
    }

    void busyNoHeader()
    {
        auto gpus = parseQueryGpuCsv(fixture("query-gpu-busy.csv"), kFixtureFields);
        QVERIFY(gpus.has_value());
        QCOMPARE(gpus->size(), std::size_t(1));
        const GpuInfo& g = gpus->front();
        QCOMPARE(*g.memoryTotalMib, 143771.0);
        QCOMPARE(*g.memoryUsedMib, 1101.0);
        QCOMPARE(*g.utilizationPct, 100.0);
        QCOMPARE(*g.temperatureC, 52.0);
        QCOMPARE(*g.powerW, 615.44);

        auto procs = parseComputeAppsCsv(fixture("query-compute-apps.csv"));
        QVERIFY2(procs.has_value(), procs ? "" : procs.error().c_str());
        QCOMPARE(procs->size(), std::size_t(1));
        attachProcesses(*gpus, *procs);
        QCOMPARE(gpus->front().processes.size(), std::size_t(1));
        const GpuProcess& p = gpus->front().processes.front();
        QCOMPARE(p.pid, std::int64_t(451));
        QCOMPARE(p.name, std::string("python3"));
        QCOMPARE(*p.usedMemoryMib, 1092.0);
    }

    void withHeaderAndUnits()
    {
        // query-gpu.csv has a header and units, and more columns than the
        // agent asks for: the header decides.
        auto gpus = parseQueryGpuCsv(fixture("query-gpu.csv"));
        QVERIFY2(gpus.has_value(), gpus ? "" : gpus.error().c_str());
        QCOMPARE(gpus->size(), std::size_t(1));
        const GpuInfo& g = gpus->front();
        QCOMPARE(g.pciBusId, std::string("00000000:00:06.0"));
        QCOMPARE(*g.memoryTotalMib, 143771.0);
        QCOMPARE(*g.memoryUsedMib, 0.0);
        QCOMPARE(*g.utilizationPct, 0.0);
        QCOMPARE(*g.powerW, 79.5);
        QCOMPARE(*g.temperatureC, 34.0);
    }

    void agentFieldOrder()
    {
        // The agent's own query (9 fields, pci.bus_id 4th), two GPUs, one N/A power.
        const std::string text = "0, GPU-a, NVIDIA H200, 00000000:00:06.0, 143771, 1101, 100, 52, 615.44\n"
                                 "1, GPU-b, NVIDIA H200, 00000000:00:07.0, 143771, 0, 0, 30, [N/A]\n";
        auto gpus = parseQueryGpuCsv(text);
        QVERIFY(gpus.has_value());
        QCOMPARE(gpus->size(), std::size_t(2));
        QCOMPARE((*gpus)[1].index, 1);
        QCOMPARE((*gpus)[1].pciBusId, std::string("00000000:00:07.0"));
        QVERIFY(!(*gpus)[1].powerW.has_value());
        QCOMPARE(*(*gpus)[0].utilizationPct, 100.0);
    }

    void errorsNameTheLine()
    {
        auto bad = parseQueryGpuCsv("0, GPU-a, H200, 0000:01:00.0, lots, 0, 0, 30, 10\n");
        QVERIFY(!bad.has_value());
        QVERIFY2(bad.error().find("line 1") != std::string::npos, bad.error().c_str());
        QVERIFY2(bad.error().find("memory.total") != std::string::npos, bad.error().c_str());
        auto shortLine = parseQueryGpuCsv("\n0, GPU-a, H200\n");
        QVERIFY(!shortLine.has_value());
        QVERIFY2(shortLine.error().find("line 2") != std::string::npos, shortLine.error().c_str());
    }

    void emptyOutput()
    {
        auto gpus = parseQueryGpuCsv("");
        QVERIFY(gpus.has_value());
        QVERIFY(gpus->empty());
        auto procs = parseComputeAppsCsv("No running processes found\n");
        QVERIFY(procs.has_value());
        QVERIFY(procs->empty());
    }
};

QTEST_GUILESS_MAIN(TestNvidiaSmiCsv)
#include "TestNvidiaSmiCsv.moc"
