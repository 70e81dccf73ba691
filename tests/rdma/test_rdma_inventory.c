/* Inventory parsing on sysfs trees: captured inside the soft-RoCE VM (sysfs-rxe) and the
 * hand-made ConnectX-6 HDR tree (sysfs-mlx5-hdr). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/report.h"
#include "nettune/sysfs.h"
#include "rdma.h"

static const nt_rdma_port_t *find(const nt_rdma_inv_t *inv, const char *dev)
{
    for (int i = 0; i < inv->nports; i++)
        if (strcmp(inv->ports[i].dev, dev) == 0)
            return &inv->ports[i];
    return NULL;
}

static const nt_counter_t *counter(const nt_rdma_port_t *p, const char *name)
{
    for (int i = 0; i < p->ncounters; i++)
        if (strcmp(p->counters[i].name, name) == 0)
            return &p->counters[i];
    return NULL;
}

static void select_all(nt_rdma_inv_t *inv, const char *hca)
{
    nt_hca_filter_t f;
    nt_gid_pref_t pf;
    unsetenv("NCCL_IB_GID_INDEX");
    nt_hca_filter_parse(hca, &f);
    nt_gid_pref_from_env(&pf);
    nt_rdma_port_select(inv, &f, &pf, -1);
}

static void test_rxe(void **state)
{
    nt_rdma_inv_t inv;
    char why[256];
    const nt_rdma_port_t *r0, *r1;
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-rxe");
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_OK);
    assert_int_equal(inv.nports, 2);
    r0 = find(&inv, "rxe0");
    r1 = find(&inv, "rxe1");
    assert_non_null(r0);
    assert_non_null(r1);
    assert_string_equal(r0->state, "ACTIVE");
    assert_int_equal(r0->state_num, 4);
    assert_string_equal(r0->phys_state, "LinkUp");
    assert_string_equal(r0->link_layer, "Ethernet");
    assert_true(r0->is_ethernet);
    assert_true(r0->have_rate);
    assert_true(r0->rate.data_Gbps == 2.5 && r0->rate.lanes == 1);
    assert_string_equal(r0->netdev, "eth0");
    assert_int_equal(r0->netdev_mtu, 1500);
    assert_string_equal(r0->pci_bus_id, ""); /* virtual device */
    assert_int_equal(r0->numa_node, -1);
    assert_int_equal(r0->ngids, 3);
    assert_int_equal(r0->gids[1].type, NT_GID_TYPE_ROCE_V2);
    assert_string_equal(r0->gids[1].netdev, "eth0");
    assert_true(nt_gid_is_ipv4(r0->gids[1].raw));
    assert_true(r0->gid_tbl_len >= 8);
    assert_non_null(counter(r0, "retry_exceeded_err"));
    assert_true(counter(r0, "retry_exceeded_err")->hw && counter(r0, "retry_exceeded_err")->is_error);
    assert_int_equal(counter(r0, "completer_retry_err")->is_error, NT_COUNTER_RETRANS);
    assert_true(counter(r0, "sent_pkts")->have_before);
    assert_null(counter(r0, "lifespan"));
    /* rxe1: its netdev dummy0 was down at capture time */
    assert_string_equal(r1->state, "DOWN");
    assert_string_equal(r1->phys_state, "Disabled");
    assert_string_equal(r1->netdev, "dummy0");
    select_all(&inv, "rxe0");
    assert_true(inv.ports[0].selected != inv.ports[1].selected);
    assert_int_equal(find(&inv, "rxe0")->gid_index, 1);
    {
        cJSON *nic = cJSON_CreateObject();
        assert_int_equal(nt_rdma_port_to_json(r0, nic), NT_OK);
        assert_string_equal(nt_json_get_str(nic, "state", ""), "ACTIVE");
        assert_true(nt_json_get_num(nic, "rate_Gbps", 0) == 2.5);
        assert_string_equal(nt_json_get_str(nic, "gid", ""), "::ffff:10.0.2.15");
        assert_string_equal(nt_json_get_str(nic, "gid_type", ""), "RoCE v2");
        assert_non_null(cJSON_GetObjectItem(nic, "counters"));
        assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(nic, "gids")), 3);
        assert_null(cJSON_GetObjectItem(nic, "lid")); /* RoCE: no LID */
        cJSON_Delete(nic);
    }
    nt_rdma_inventory_free(&inv);
    nt_sysfs_set_root(NULL);
}

static void test_mlx5_hdr(void **state)
{
    nt_rdma_inv_t inv;
    char why[256];
    nt_rdma_port_t *m0, *m1;
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-mlx5-hdr");
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_OK);
    assert_int_equal(inv.nports, 2);
    m0 = (nt_rdma_port_t *)find(&inv, "mlx5_0");
    m1 = (nt_rdma_port_t *)find(&inv, "mlx5_1");
    assert_string_equal(m0->state, "ACTIVE");
    assert_string_equal(m0->link_layer, "InfiniBand");
    assert_true(m0->rate.data_Gbps == 200.0 && m0->rate.lanes == 4);
    assert_string_equal(m0->rate.speed->name, "HDR");
    assert_string_equal(m0->rate.encoding, "64b/66b");
    assert_int_equal(m0->lid, 4);
    assert_int_equal(m0->sm_lid, 1);
    assert_string_equal(m0->fw_ver, "20.37.1700");
    assert_string_equal(m0->pci_bus_id, "0000:18:00.0");
    assert_int_equal(m0->numa_node, 0);
    assert_int_equal(m0->ngids, 1);
    assert_int_equal(m0->gids[0].type, NT_GID_TYPE_IB);
    assert_int_equal(m0->gid_tbl_len, 8);
    assert_string_equal(m1->state, "DOWN");
    assert_string_equal(m1->phys_state, "Disabled");
    assert_int_equal(m1->lid, 65535);
    assert_int_equal(m1->numa_node, 1);
    assert_string_equal(m1->pci_bus_id, "0000:19:00.0");
    /* counters: widths and saturation as read */
    assert_int_equal(counter(m0, "link_downed")->width_bits, 8);
    assert_int_equal(counter(m0, "link_downed")->before, 255);
    select_all(&inv, NULL);
    assert_int_equal(m0->gid_index, 0);
    assert_true(m0->selected && m1->selected);
    /* simulate a second reading: saturated stays saturated, port_rcv_errors grew */
    nt_rdma_counters_read(m0, 1);
    for (int i = 0; i < m0->ncounters; i++)
        if (!strcmp(m0->counters[i].name, "port_rcv_errors"))
            m0->counters[i].after = 5;
    {
        cJSON *nic = cJSON_CreateObject(), *c;
        assert_int_equal(nt_rdma_port_to_json(m0, nic), NT_OK);
        c = cJSON_GetObjectItem(nic, "counters");
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "link_downed"), "saturated")));
        assert_string_equal(nt_json_get_str(cJSON_GetObjectItem(c, "link_downed"), "change", ""), "saturated");
        assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "link_downed"), "delta"));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "port_xmit_discards"), "saturated")));
        assert_true(nt_json_get_num(cJSON_GetObjectItem(c, "port_rcv_errors"), "delta", -1) == 2);
        assert_string_equal(nt_json_get_str(cJSON_GetObjectItem(c, "port_rcv_errors"), "change", ""), "grew");
        assert_true(nt_json_get_num(nic, "lid", 0) == 4);
        assert_string_equal(nt_json_get_str(nic, "active_speed", ""), "HDR");
        cJSON_Delete(nic);
    }
    /* NCCL_IB_HCA=^mlx5_1 */
    select_all(&inv, "^mlx5_1");
    assert_true(m0->selected && !m1->selected);
    nt_rdma_inventory_free(&inv);
    nt_sysfs_set_root(NULL);
}

static void test_no_device(void **state)
{
    nt_rdma_inv_t inv;
    char why[256];
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-mlx5-hdr/sys/bus"); /* no class/infiniband */
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, "no RDMA device"));
    nt_sysfs_set_root(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_rxe), cmocka_unit_test(test_mlx5_hdr),
                                       cmocka_unit_test(test_no_device)};
    return cmocka_run_group_tests_name("rdma_inventory", tests, NULL, NULL);
}
