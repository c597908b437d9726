-- MySQL dump 10.13  Distrib 8.0.33, for Linux (x86_64)
/*!40101 SET NAMES utf8mb4 */;
CREATE TABLE `xxl_job_group` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `app_name` varchar(64) NOT NULL COMMENT '执行器AppName',
  `title` varchar(12) NOT NULL COMMENT '执行器名称',
  `address_type` tinyint(4) NOT NULL DEFAULT '0' COMMENT '执行器地址类型：0=自动注册、1=手动录入',
  `address_list` text COMMENT '执行器地址列表，多地址逗号分隔',
  `update_time` datetime DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4;
INSERT INTO `xxl_job_group` VALUES (1,'xxl-job-executor-sample','示例执行器',0,'http://10.0.0.9:9999/','2024-01-01 10:00:00'),(7,'py-scripts','scripts',0,NULL,'2024-01-01 10:00:00');
CREATE TABLE `xxl_job_info` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `job_group` int(11) NOT NULL COMMENT '执行器主键ID',
  `job_desc` varchar(255) NOT NULL,
  `add_time` datetime DEFAULT NULL,
  `update_time` datetime DEFAULT NULL,
  `author` varchar(64) DEFAULT NULL COMMENT '作者',
  `alarm_email` varchar(255) DEFAULT NULL COMMENT '报警邮件',
  `schedule_type` varchar(50) NOT NULL DEFAULT 'NONE' COMMENT '调度类型',
  `schedule_conf` varchar(128) DEFAULT NULL COMMENT '调度配置，值含义取决于调度类型',
  `misfire_strategy` varchar(50) NOT NULL DEFAULT 'DO_NOTHING' COMMENT '调度过期策略',
  `executor_route_strategy` varchar(50) DEFAULT NULL COMMENT '执行器路由策略',
  `executor_handler` varchar(255) DEFAULT NULL COMMENT '执行器任务handler',
  `executor_param` varchar(512) DEFAULT NULL COMMENT '执行器任务参数',
  `executor_block_strategy` varchar(50) DEFAULT NULL COMMENT '阻塞处理策略',
  `executor_timeout` int(11) NOT NULL DEFAULT '0' COMMENT '任务执行超时时间，单位秒',
  `executor_fail_retry_count` int(11) NOT NULL DEFAULT '0' COMMENT '失败重试次数',
  `glue_type` varchar(50) NOT NULL COMMENT 'GLUE类型',
  `glue_source` mediumtext COMMENT 'GLUE源代码',
  `glue_remark` varchar(128) DEFAULT NULL COMMENT 'GLUE备注',
  `glue_updatetime` datetime DEFAULT NULL COMMENT 'GLUE更新时间',
  `child_jobid` varchar(255) DEFAULT NULL COMMENT '子任务ID，多个逗号分隔',
  `trigger_status` tinyint(4) NOT NULL DEFAULT '0' COMMENT '调度状态：0-停止，1-运行',
  `trigger_last_time` bigint(13) NOT NULL DEFAULT '0' COMMENT '上次调度时间',
  `trigger_next_time` bigint(13) NOT NULL DEFAULT '0' COMMENT '下次调度时间',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB AUTO_INCREMENT=20 DEFAULT CHARSET=utf8mb4;
INSERT INTO `xxl_job_info` VALUES (10,1,'cron job','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','CRON','0/30 * * * * ?','FIRE_ONCE_NOW','LAST','demoJobHandler','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,'11,12',1,0,0);
INSERT INTO `xxl_job_info` VALUES (11,1,'fix rate','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','FIX_RATE','60','DO_NOTHING','RANDOM','rateHandler','x','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,'',1,0,0),(12,1,'manual only','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','NONE','','DO_NOTHING','CONSISTENT_HASH','noneHandler','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,'',0,0,0),(13,1,'lfu','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','NONE',NULL,'DO_NOTHING','LEAST_FREQUENTLY_USED','h','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,NULL,0,0,0),(14,1,'lru','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','NONE',NULL,'DO_NOTHING','LEAST_RECENTLY_USED','h','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,NULL,0,0,0),(15,1,'failover','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','NONE',NULL,'DO_NOTHING','FAILOVER','h','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,NULL,0,0,0),(16,1,'broadcast','2024-01-01 10:00:00','2024-01-01 10:00:00','XXL','','CRON','0 0 1 * * ?','DO_NOTHING','SHARDING_BROADCAST','shardingJobHandler','','SERIAL_EXECUTION',0,0,'BEAN','',NULL,NULL,NULL,1,0,0);
INSERT INTO `xxl_job_info` VALUES (17,7,'python','2024-01-01 10:00:00','2024-01-01 10:00:00','py','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_PYTHON','print(\'hi\')','v1','2024-02-03 04:05:06','',0,0,0),(18,7,'python2','2024-01-01 10:00:00','2024-01-01 10:00:00','py','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_PYTHON2','print \'hi\'','v1','2024-02-03 04:05:06','',0,0,0),(19,7,'node','2024-01-01 10:00:00','2024-01-01 10:00:00','js','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_NODEJS','console.log(1)','v1','2024-02-03 04:05:06','',0,0,0),(20,7,'php','2024-01-01 10:00:00','2024-01-01 10:00:00','php','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_PHP','<?php echo 1;','v1','2024-02-03 04:05:06','',0,0,0),(21,7,'pwsh','2024-01-01 10:00:00','2024-01-01 10:00:00','ps','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_POWERSHELL','Write-Output 1','v1','2024-02-03 04:05:06','',0,0,0),(22,7,'groovy','2024-01-01 10:00:00','2024-01-01 10:00:00','java','','NONE','','DO_NOTHING','FIRST','','','SERIAL_EXECUTION',0,0,'GLUE_GROOVY','package com.xxl.job.service.handler;\nclass DemoGlueJobHandler extends IJobHandler {}','v1','2024-02-03 04:05:06','',0,0,0);
