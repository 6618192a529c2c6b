// qossim reference scenario, built with ns-3 (3.37) for a side-by-side
// speed comparison.
//
//   N CBR voice flows (160 B frame every 20 ms, random phase U(0, 20 ms))
//     -> 10 Gb/s, 1 ms point-to-point link -> router
//     -> 155.52 Mb/s, 1 ms point-to-point link -> sink
//
// All N flows live on one source node; each flow is its own application
// with its own UDP socket. Queues are plain DropTail device queues (the
// traffic-control root queue discs are removed); their limit (default
// 10000 packets) is far above anything the 1000-flow load ever queues.
//
// Output: exactly one line on stdout
//   flows=N sim=Ts delivered_pkts=D wall=Ws pkts_per_wall_s=R
// where wall is measured around Simulator::Run() only.
//
// Usage: reference [--flows N] [--sim SECONDS] [--seed S] [--queue-pkts Q]
//        (both "--flows N" and "--flows=N" are accepted)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace ns3;

namespace
{

// UDP payload such that the frame on the point-to-point wire is 160 B:
// 130 B payload + 8 B UDP + 20 B IPv4 + 2 B PPP = 160 B.
constexpr uint32_t kPayloadBytes = 130;
constexpr uint16_t kSinkPort = 9;

// Minimal constant-bit-rate sender: one UDP socket, one packet of
// kPayloadBytes every `interval`, first packet at the application start time.
class CbrSender : public Application
{
  public:
    CbrSender() = default;

    void Setup(Address peer, uint32_t payload, Time interval)
    {
        m_peer = peer;
        m_payload = payload;
        m_interval = interval;
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->Connect(m_peer);
        m_running = true;
        SendOne();
    }

    void StopApplication() override
    {
        m_running = false;
        if (m_event.IsRunning())
        {
            Simulator::Cancel(m_event);
        }
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void SendOne()
    {
        m_socket->Send(Create<Packet>(m_payload));
        if (m_running)
        {
            m_event = Simulator::Schedule(m_interval, &CbrSender::SendOne, this);
        }
    }

    Ptr<Socket> m_socket;
    Address m_peer;
    uint32_t m_payload = 0;
    Time m_interval;
    EventId m_event;
    bool m_running = false;
};

bool
ParseArg(int argc, char** argv, int& i, const char* name, std::string& out)
{
    const size_t n = std::strlen(name);
    if (std::strncmp(argv[i], name, n) != 0)
    {
        return false;
    }
    if (argv[i][n] == '=')
    {
        out = argv[i] + n + 1;
        return true;
    }
    if (argv[i][n] == '\0' && i + 1 < argc)
    {
        out = argv[++i];
        return true;
    }
    return false;
}

void
Usage(const char* prog)
{
    std::fprintf(stderr,
                 "usage: %s [--flows N] [--sim SECONDS] [--seed S] [--queue-pkts Q]\n",
                 prog);
    std::exit(2);
}

std::string
FormatSeconds(double s)
{
    char buf[64];
    if (s == std::floor(s))
    {
        std::snprintf(buf, sizeof buf, "%.0f", s);
    }
    else
    {
        std::snprintf(buf, sizeof buf, "%g", s);
    }
    return buf;
}

} // namespace

int
main(int argc, char** argv)
{
    uint32_t flows = 1000;
    double simSeconds = 20.0;
    uint64_t seed = 1;
    uint32_t queuePkts = 10000;

    for (int i = 1; i < argc; ++i)
    {
        std::string v;
        if (ParseArg(argc, argv, i, "--flows", v))
        {
            flows = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
        }
        else if (ParseArg(argc, argv, i, "--sim", v))
        {
            simSeconds = std::strtod(v.c_str(), nullptr);
        }
        else if (ParseArg(argc, argv, i, "--seed", v))
        {
            seed = std::strtoull(v.c_str(), nullptr, 10);
        }
        else if (ParseArg(argc, argv, i, "--queue-pkts", v))
        {
            queuePkts = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
        }
        else
        {
            Usage(argv[0]);
        }
    }
    if (flows == 0 || !(simSeconds > 0.0) || queuePkts == 0)
    {
        Usage(argv[0]);
    }

    // ns-3 seeds must be non-zero 32-bit values.
    RngSeedManager::SetSeed(static_cast<uint32_t>(seed % 4294967295ULL) + 1);
    RngSeedManager::SetRun(1);

    NodeContainer nodes;
    nodes.Create(3);
    Ptr<Node> source = nodes.Get(0);
    Ptr<Node> router = nodes.Get(1);
    Ptr<Node> sink = nodes.Get(2);

    // Device queues: plain DropTail FIFO, limit in packets.
    const std::string queueSize = std::to_string(queuePkts) + "p";

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", DataRateValue(DataRate(10000000000ULL)));
    access.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1)));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(queueSize)));

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", DataRateValue(DataRate(155520000ULL)));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>",
                        "MaxSize",
                        QueueSizeValue(QueueSize(queueSize)));

    NetDeviceContainer accessDevs = access.Install(source, router);
    NetDeviceContainer bottleneckDevs = bottleneck.Install(router, sink);

    InternetStackHelper stack;
    stack.Install(nodes);

    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(accessDevs);
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer bottleneckIfs = addr.Assign(bottleneckDevs);

    // Address assignment installs the default root queue disc (FqCoDel);
    // remove it so packets go straight into the DropTail device queues.
    TrafficControlHelper tch;
    tch.Uninstall(accessDevs);
    tch.Uninstall(bottleneckDevs);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    const Time stopTime = Seconds(simSeconds);

    PacketSinkHelper sinkHelper("ns3::UdpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), kSinkPort));
    ApplicationContainer sinkApps = sinkHelper.Install(sink);
    sinkApps.Start(Seconds(0));
    sinkApps.Stop(stopTime);
    Ptr<PacketSink> packetSink = DynamicCast<PacketSink>(sinkApps.Get(0));

    const Address sinkAddress = InetSocketAddress(bottleneckIfs.GetAddress(1), kSinkPort);
    const Time interval = MilliSeconds(20);
    Ptr<UniformRandomVariable> phase = CreateObject<UniformRandomVariable>();
    phase->SetAttribute("Min", DoubleValue(0.0));
    phase->SetAttribute("Max", DoubleValue(static_cast<double>(interval.GetNanoSeconds())));

    for (uint32_t f = 0; f < flows; ++f)
    {
        Ptr<CbrSender> app = CreateObject<CbrSender>();
        app->Setup(sinkAddress, kPayloadBytes, interval);
        source->AddApplication(app);
        app->SetStartTime(NanoSeconds(static_cast<int64_t>(phase->GetValue())));
        app->SetStopTime(stopTime);
    }

    Simulator::Stop(stopTime);

    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const auto t1 = std::chrono::steady_clock::now();

    const uint64_t delivered = packetSink->GetTotalRx() / kPayloadBytes;
    Simulator::Destroy();

    const double wall = std::chrono::duration<double>(t1 - t0).count();
    const double rate = wall > 0.0 ? static_cast<double>(delivered) / wall : 0.0;
    std::printf("flows=%u sim=%ss delivered_pkts=%llu wall=%.3fs pkts_per_wall_s=%.0f\n",
                flows,
                FormatSeconds(simSeconds).c_str(),
                static_cast<unsigned long long>(delivered),
                wall,
                rate);
    return 0;
}
