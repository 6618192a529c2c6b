// The TCP benchmark in ns-3: N TCP bulk transfers across a dumbbell whose 10 Mb/s
// bottleneck (5 ms) has a RED queue; host i's access links (100 Mb/s) give it a
// round-trip propagation time of 50 + 100*i/(N-1) ms. 1460-byte segments (1500 bytes on
// the wire with IPv4 and TCP headers, 1502 with the point-to-point header), a 64-segment
// receive window, an ACK for every segment, NewReno congestion control (SACK and
// timestamps at ns-3's defaults, on); connections start uniformly within the first second.
//
// Prints one line in the format of bench/qossim-bench/src/tcp.rs.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

int
main(int argc, char* argv[])
{
    uint32_t flows = 50;
    double sim = 100.0;
    uint32_t seed = 1;
    CommandLine cmd;
    cmd.AddValue("flows", "number of TCP connections", flows);
    cmd.AddValue("sim", "simulated seconds", sim);
    cmd.AddValue("seed", "seed", seed);
    // Accept "--flows N" as well as "--flows=N".
    std::vector<std::string> args;
    for (int i = 0; i < argc; i++)
    {
        std::string a = argv[i];
        if (i + 1 < argc && a.rfind("--", 0) == 0 && a.find('=') == std::string::npos)
        {
            args.push_back(a + "=" + argv[i + 1]);
            i++;
        }
        else
        {
            args.push_back(a);
        }
    }
    std::vector<char*> cargs;
    for (auto& a : args)
    {
        cargs.push_back(a.data());
    }
    cmd.Parse(static_cast<int>(cargs.size()), cargs.data());

    auto t0 = std::chrono::steady_clock::now();
    RngSeedManager::SetSeed(seed + 1);
    const uint32_t mss = 1460;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64 * mss));
    // SACK and timestamps stay on, ns-3's defaults: turning either off crashes the
    // 3.37 build in TcpRateLinux::SkbSent.

    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    NodeContainer routers;
    routers.Create(2);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("5ms"));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer bdev = bottleneck.Install(routers.Get(0), routers.Get(1));
    TrafficControlHelper red;
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MinTh", DoubleValue(5),
                         "MaxTh", DoubleValue(15),
                         "LInterm", DoubleValue(10),
                         "QW", DoubleValue(0.002),
                         "MeanPktSize", UintegerValue(1500),
                         "LinkBandwidth", StringValue("10Mbps"),
                         "LinkDelay", StringValue("5ms"),
                         "MaxSize", QueueSizeValue(QueueSize("100p")));
    red.Install(bdev.Get(0));
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize("1000p")));
    fifo.Install(bdev.Get(1));

    Ipv4AddressHelper address;
    address.SetBase("10.0.0.0", "255.255.255.252");
    address.Assign(bdev);
    address.NewNetwork();
    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < flows; i++)
    {
        double rtt_ms = 50.0 + 100.0 * i / std::max<uint32_t>(flows - 1, 1);
        double d_ms = (rtt_ms / 2.0 - 5.0) / 2.0;
        PointToPointHelper access;
        access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
        access.SetChannelAttribute("Delay", TimeValue(MicroSeconds(int64_t(d_ms * 1000.0))));
        NetDeviceContainer a = access.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer b = access.Install(routers.Get(1), receivers.Get(i));
        address.Assign(a);
        address.NewNetwork();
        Ipv4InterfaceContainer bi = address.Assign(b);
        address.NewNetwork();
        sinks.push_back(bi.GetAddress(1));
        TrafficControlHelper::Default().Uninstall(a);
        TrafficControlHelper::Default().Uninstall(b);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> apps;
    for (uint32_t i = 0; i < flows; i++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
        ApplicationContainer s = sink.Install(receivers.Get(i));
        s.Start(Seconds(0));
        apps.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(sinks[i], 9));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer c = bulk.Install(senders.Get(i));
        c.Start(Seconds(start->GetValue(0.0, 1.0)));
    }
    Simulator::Stop(Seconds(sim));
    Simulator::Run();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double delivered = 0, mean = 0, lo = 1e300, hi = 0;
    for (auto& a : apps)
    {
        double bytes = static_cast<double>(a->GetTotalRx());
        delivered += bytes / mss;
        double g = bytes * 8 / sim / 1e6;
        mean += g / flows;
        lo = std::min(lo, g);
        hi = std::max(hi, g);
    }
    Simulator::Destroy();
    std::printf("flows=%u sim=%gs delivered_pkts=%.0f wall=%.3fs pkts_per_wall_s=%.0f "
                "goodput_mean_mbps=%.4f goodput_min_mbps=%.4f goodput_max_mbps=%.4f\n",
                flows, sim, delivered, wall, delivered / wall, mean, lo, hi);
    return 0;
}
